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
import { readProperties, scramLogin } from './stand-in-kafka-client.mjs';

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

const properties = options['--command-config'] === undefined ? {} : readProperties(options['--command-config']);
const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
const login = scramLogin(properties, state.users);
// A PLAINTEXT (or TLS) client on a SASL listener gets no answer it understands: its calls time out.
if (login.unanswered) timeout();
if (!login.ok) fail(login.exception, login.message);
const user = login.user;

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
