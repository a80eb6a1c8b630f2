#!/usr/bin/env node
// The e2e's stand-in of Kafka's kafka-topics.sh inside a broker's container (no Kafka runs on
// loopback): kwok maps `kubectl exec kafka-cluster-<pool>-<n> -c kafka` to a local process
// whose PATH finds this program first as `kafka-topics.sh` (e2e/live-containers.ts). It plays
// `--list` against the broker's own listener 9092 from the cluster's state, a JSON file
// ($KAFKA_STATE: the topics, each user's SCRAM-SHA-512 credential and ACLs, written by the
// harness from the KafkaTopics, KafkaUsers and their password Secrets), and refuses what
// Kafka refuses, with Kafka's messages: another bootstrap server (nothing answers there), a
// client that does not speak SASL_PLAINTEXT with SCRAM-SHA-512 (the listener's only
// mechanism), an unknown user or a wrong password. It lists only the topics the user may
// DESCRIBE: an ALLOW of Describe, Read, Write, Delete, Alter or All on the topic (literal
// name, `*`, or a prefix) and no DENY of Describe or All on it (Kafka's AclOperation and
// StandardAuthorizer). Exit codes as TopicCommand: 0, or 1 with "Error while executing topic
// command : <message>" on stdout and the exception in the log on stderr.
import * as fs from 'node:fs';

const fail = (exception, message) => {
  process.stdout.write(`Error while executing topic command : ${message}\n`);
  process.stderr.write(`[${new Date().toISOString().replace('T', ' ').replace('Z', '')}] ERROR ${exception}: ${message}\n (org.apache.kafka.tools.TopicCommand)\n`);
  process.exit(1);
};
const usage = (message) => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};

const statePath = process.env.KAFKA_STATE;
if (statePath === undefined) usage('stand-in kafka-topics.sh: KAFKA_STATE is not set');

// kafka-topics.sh's options: each flag with its value, --list alone.
const options = {};
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const flag = args[i];
  if (flag === '--list') options[flag] = true;
  else if (flag === '--bootstrap-server' || flag === '--command-config') options[flag] = args[++i];
  else usage(`${flag} is not a recognized option`);
}
if (!options['--list']) usage('stand-in kafka-topics.sh: plays --list only');
if (options['--bootstrap-server'] === undefined) usage('Missing required argument "[bootstrap-server]"');

// What the admin client finds when it cannot reach a broker: the call times out.
const timeout = () => fail('org.apache.kafka.common.errors.TimeoutException', 'Timed out waiting for a node assignment. Call: listTopics');
// Inside the broker's container, only its own listener answers on loopback: 9092 (plain, SCRAM-SHA-512).
if (options['--bootstrap-server'] !== 'localhost:9092') timeout();

/** A Java properties file as Properties.load reads it: `key=value` (or `:`), `#` and `!` comments, `\` escapes. */
function readProperties(text) {
  const properties = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^\s+/, '');
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const match = /^((?:[^=:\s\\]|\\.)+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (!match) continue;
    const unescape = (value) =>
      value.replace(/\\u([0-9a-fA-F]{4})|\\(.)/g, (_, hex, escaped) => (hex !== undefined ? String.fromCharCode(parseInt(hex, 16)) : { t: '\t', n: '\n', r: '\r', f: '\f' }[escaped] ?? escaped));
    properties[unescape(match[1])] = unescape(match[2]);
  }
  return properties;
}

const properties = options['--command-config'] === undefined ? {} : readProperties(fs.readFileSync(options['--command-config'], 'utf8'));
// A PLAINTEXT (or TLS) client on a SASL listener gets no answer it understands: its calls time out.
if ((properties['security.protocol'] ?? 'PLAINTEXT') !== 'SASL_PLAINTEXT') timeout();
const mechanism = properties['sasl.mechanism'] ?? 'GSSAPI';
if (mechanism !== 'SCRAM-SHA-512') {
  fail('org.apache.kafka.common.errors.UnsupportedSaslMechanismException', `Client SASL mechanism '${mechanism}' not enabled in the server, enabled mechanisms are [SCRAM-SHA-512]`);
}
// sasl.jaas.config: `<LoginModule> required key="value" ...;` with `\` escapes inside quotes.
const jaas = properties['sasl.jaas.config'] ?? '';
const module = /^\s*(\S+)\s+required\s+(.*);\s*$/.exec(jaas);
if (!module || module[1] !== 'org.apache.kafka.common.security.scram.ScramLoginModule') {
  fail('java.lang.IllegalArgumentException', `Login module not specified in JAAS config or not the SCRAM login module: ${module?.[1] ?? jaas}`);
}
const jaasOptions = {};
for (const [, key, quoted, bare] of module[2].matchAll(/(\w+)=(?:"((?:[^"\\]|\\.)*)"|(\S+))/g)) jaasOptions[key] = quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : bare;

const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
const user = state.users[jaasOptions.username];
if (user === undefined || user.password !== jaasOptions.password) {
  fail('org.apache.kafka.common.errors.SaslAuthenticationException', 'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512');
}

// The topics the user may DESCRIBE: an ALLOW of an operation that implies it, and no DENY of
// DESCRIBE or ALL (a DENY of READ, say, does not deny DESCRIBE).
const IMPLIES = { allow: new Set(['Describe', 'Read', 'Write', 'Delete', 'Alter', 'All']), deny: new Set(['Describe', 'All']) };
const matches = (acl, topic) =>
  acl.resource?.type === 'topic' &&
  ((acl.resource.patternType ?? 'literal') === 'prefix' ? topic.startsWith(acl.resource.name) : acl.resource.name === '*' || acl.resource.name === topic);
const may = (topic, type) => user.acls.some((acl) => (acl.type ?? 'allow') === type && matches(acl, topic) && (acl.operations ?? []).some((operation) => IMPLIES[type].has(operation)));
for (const topic of [...state.topics].sort()) {
  if (may(topic, 'allow') && !may(topic, 'deny')) process.stdout.write(`${topic}\n`);
}
