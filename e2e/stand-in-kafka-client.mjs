// What a Kafka client does with its configuration before a broker answers it, shared by the
// e2e's stand-ins of Kafka's tools (e2e/stand-in-kafka-topics.mjs,
// e2e/stand-in-kafka-broker-api-versions.mjs): read the properties file as Java reads it, and
// log in to a listener that speaks SASL_PLAINTEXT with SCRAM-SHA-512 only (the platform's
// listeners, src/constructs/kafka-cluster.ts), as the broker judges the login. Messages are
// Kafka 4.3.1's (clients/.../errors, security/scram).
import * as fs from 'node:fs';

/**
 * A Java properties file as Kafka's Utils.loadProps reads it (Properties.load of an
 * InputStream): ISO 8859-1, `key=value` (or `:` or a space), `#` and `!` comments, `\` escapes.
 */
export function readProperties(file) {
  const text = fs.readFileSync(file, 'latin1');
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

/**
 * The login of a client with these properties on a SASL_PLAINTEXT listener whose only
 * mechanism is SCRAM-SHA-512, against the users the cluster holds (`users`: name to
 * `{ password }`, the credentials the User Operator set): `{ ok: true, user }`; `{ ok: false,
 * unanswered: true }` for a client that does not speak SASL (the broker closes its connection,
 * so its requests get no answer); or `{ ok: false, exception, message }`, Kafka's
 * authentication error.
 */
export function scramLogin(properties, users) {
  if ((properties['security.protocol'] ?? 'PLAINTEXT') !== 'SASL_PLAINTEXT') return { ok: false, unanswered: true };
  const mechanism = properties['sasl.mechanism'] ?? 'GSSAPI';
  if (mechanism !== 'SCRAM-SHA-512') {
    return { ok: false, exception: 'org.apache.kafka.common.errors.UnsupportedSaslMechanismException', message: `Client SASL mechanism '${mechanism}' not enabled in the server, enabled mechanisms are [SCRAM-SHA-512]` };
  }
  // sasl.jaas.config: `<LoginModule> required key="value" ...;` with `\` escapes inside quotes (JaasConfig's StreamTokenizer).
  const jaas = properties['sasl.jaas.config'] ?? '';
  const module = /^\s*(\S+)\s+required\s+(.*);\s*$/.exec(jaas);
  if (!module || module[1] !== 'org.apache.kafka.common.security.scram.ScramLoginModule') {
    return { ok: false, exception: 'java.lang.IllegalArgumentException', message: `Login module not specified in JAAS config or not the SCRAM login module: ${module?.[1] ?? jaas}` };
  }
  const options = {};
  for (const [, key, quoted, bare] of module[2].matchAll(/(\w+)=(?:"((?:[^"\\]|\\.)*)"|(\S+))/g)) options[key] = quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : bare;
  const user = users[options.username];
  if (user === undefined || user.password !== options.password) {
    return { ok: false, exception: 'org.apache.kafka.common.errors.SaslAuthenticationException', message: 'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512' };
  }
  return { ok: true, user };
}
