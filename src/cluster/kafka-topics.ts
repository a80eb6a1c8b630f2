import { PORTS } from '../contract/contract';
import { STRIMZI } from '../contract/upstream';

/**
 * The topics as a broker sees them on its listener 9092 (1.3 step 6), for one user: what
 * its ACLs let it see, the client properties and command of Kafka's own `kafka-topics.sh
 * --list` run inside a broker's container, and how its answer is read. Pure: the exec is
 * src/cluster/broker.ts's; test/kafka-topics.test.ts pins each rule.
 */

/** One ACL as the environment writes it: a topic and the operations allowed on it. */
export interface TopicAcl {
  readonly topic: string;
  readonly operations: readonly string[];
}

/**
 * The operations that let a user see a topic. Listing topics is a Metadata request, whose
 * answer holds only the topics the principal may DESCRIBE (Kafka's KafkaApis
 * `handleTopicMetadataRequest` filters by `AclOperation.DESCRIBE`), and an ALLOW of READ,
 * WRITE, DELETE or ALTER implies DESCRIBE, as ALL implies everything (Kafka's
 * clients/src/main/java/org/apache/kafka/common/acl/AclOperation.java, its class comment,
 * and the authorizer's `IMPLIES_DESCRIBE` in
 * metadata/src/main/java/org/apache/kafka/metadata/authorizer/StandardAuthorizerData.java;
 * https://kafka.apache.org/documentation/#operations_resources_and_protocols). CREATE,
 * DESCRIBE_CONFIGS and ALTER_CONFIGS do not: a user allowed only those does not see the topic.
 */
export const OPERATIONS_THAT_DESCRIBE: ReadonlySet<string> = new Set(['Describe', 'Read', 'Write', 'Delete', 'Alter', 'All']);

/** The topics a user's ACLs (literal topic names, ALLOW) let it see, in order. */
export function topicsVisibleTo(acls: readonly TopicAcl[]): string[] {
  const topics = new Set(acls.filter((acl) => acl.operations.some((operation) => OPERATIONS_THAT_DESCRIBE.has(operation))).map((acl) => acl.topic));
  return [...topics].sort();
}

/** A value written into a Java properties file: `\` escaped, and what is not printable ASCII as `\uXXXX` (Properties.load reads ISO 8859-1). */
function propertiesValue(text: string): string {
  return [...text]
    .map((character) => {
      if (character === '\\') return '\\\\';
      const code = character.codePointAt(0)!;
      if (code >= 0x20 && code < 0x7f) return character;
      // Outside the BMP: its two UTF-16 units, as Properties reads them.
      return [...Array(character.length).keys()].map((unit) => `\\u${character.charCodeAt(unit).toString(16).padStart(4, '0')}`).join('');
    })
    .join('');
}

/**
 * The client properties of a SCRAM-SHA-512 login on the plain listener, as Strimzi's user
 * Secret writes `sasl.jaas.config`: the password quoted for JAAS (`\` and `"` escaped), then
 * for the properties file. Passed on the exec's stdin, never on a command line.
 */
export function scramClientProperties(username: string, password: string): string {
  const jaasQuoted = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  const jaas = `org.apache.kafka.common.security.scram.ScramLoginModule required username=${jaasQuoted(username)} password=${jaasQuoted(password)};`;
  const lines = ['security.protocol=SASL_PLAINTEXT', 'sasl.mechanism=SCRAM-SHA-512', `sasl.jaas.config=${propertiesValue(jaas)}`];
  if (lines.length !== PROPERTIES_LINES) throw new Error(`the command reads ${PROPERTIES_LINES} lines of properties, not ${lines.length}`);
  return `${lines.join('\n')}\n`;
}

/** How many lines of properties the command reads from stdin (the exec's stdin stays open: see ClusterConnection.exec). */
const PROPERTIES_LINES = 3;

/**
 * The command run in a broker's container: the properties' lines read from stdin into a file
 * of its own in /tmp (mktemp, mode 600), removed when the shell ends, then `kafka-topics.sh
 * --list` against the broker's own listener 9092. The tool is found on PATH with the image's
 * tools folder appended, which is where the image has it (the e2e's stand-in container puts
 * its own first on PATH).
 */
export function listTopicsCommand(): string[] {
  const { topicsTool } = STRIMZI.brokerPods;
  const folder = topicsTool.slice(0, topicsTool.lastIndexOf('/'));
  const tool = topicsTool.slice(topicsTool.lastIndexOf('/') + 1);
  const list = `PATH="$PATH:${folder}" ${tool} --bootstrap-server localhost:${PORTS.broker} --command-config "$f" --list`;
  // The shell's own read and printf (builtins: no process, no command line) copy the lines.
  const copy = `for n in ${[...Array(PROPERTIES_LINES).keys()].map((n) => n + 1).join(' ')}; do IFS= read -r line || exit 1; printf '%s\\n' "$line"; done > "$f"`;
  return ['/bin/sh', '-c', `umask 077; f=$(mktemp) || exit 1; trap 'rm -f "$f"' EXIT HUP INT TERM; ${copy} && ${list}; s=$?; rm -f "$f"; exit $s`];
}

/** The topic names `kafka-topics.sh --list` printed, one a line, in order. */
export function parseTopicList(stdout: string): string[] {
  return [
    ...new Set(
      stdout
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== ''),
    ),
  ].sort();
}

/** Whether the listing is what the ACLs allow: PASS the topics, else which are missing and which unexpected. */
export function judgeListing(expected: readonly string[], listed: readonly string[]): { readonly ok: boolean; readonly detail: string } {
  const missing = expected.filter((topic) => !listed.includes(topic));
  const unexpected = listed.filter((topic) => !expected.includes(topic));
  if (missing.length === 0 && unexpected.length === 0) return { ok: true, detail: listed.length === 0 ? 'no topic, as its ACLs allow none' : listed.join(', ') };
  const problems = [
    ...(missing.length > 0 ? [`missing ${missing.join(', ')} (its ACLs allow it)`] : []),
    ...(unexpected.length > 0 ? [`unexpected ${unexpected.join(', ')} (no ACL of its allows it)`] : []),
  ];
  return { ok: false, detail: `${problems.join('; ')}; listed: ${listed.join(', ') || 'none'}` };
}

/**
 * Why the tool failed, in one line: its own `Error while executing topic command : ...`
 * (TopicCommand prints it on stdout, the stack trace goes to the log on stderr), else the
 * last line of stderr that is not a stack frame, else the exec's message.
 */
export function toolFailure(stdout: string, stderr: string, message: string): string {
  const lines = `${stdout}\n${stderr}`.split('\n').map((line) => line.trim());
  const own = lines.find((line) => line.startsWith('Error while executing topic command'));
  if (own !== undefined) return own;
  const said = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('at ') && !line.startsWith('...'));
  return said.at(-1) ?? (message || 'exited non-zero with no output');
}
