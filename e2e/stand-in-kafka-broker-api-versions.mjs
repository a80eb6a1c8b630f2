#!/usr/bin/env node
// The e2e's stand-in of Kafka's kafka-broker-api-versions.sh in the Strimzi Kafka image (no
// Kafka runs on loopback), for the smoke hook's broker step (4.1 step 5), which the harness
// plays as its container (e2e/live-containers.ts). Like BrokerApiVersionsCommand (Kafka 4.3.1,
// tools/.../BrokerApiVersionsCommand.java) it reads the --command-config properties, sends a
// metadata request to the first bootstrap address that answers, then asks every broker for its
// API versions, printing `<broker> -> (<versions>)` per broker, and exits 0; a failure exits 1
// with the exception's message on stderr. What the cluster would answer comes from two files:
// - $KAFKA_STATE: the cluster's users and their SCRAM-SHA-512 credentials (kafka.json);
// - $KAFKA_NETWORK: for the client's namespace, the host names the cluster's DNS resolves
//   (`resolvable`), the `host:port` addresses that reach a broker's SASL_PLAINTEXT listener
//   (`listeners`: Service ports that send to a ready broker pod's listener port, allowed by the
//   listener's network policy), and the brokers metadata names (`brokers`: `{ id, host, port }`).
// Refused as Kafka refuses: a bootstrap list with no resolvable host ("No resolvable bootstrap
// urls given in bootstrap.servers", ClientUtils.parseAndValidateAddresses); no address that
// answers, or a client without SASL ("Request METADATA failed on brokers [...]", sendAnyNode);
// another mechanism or a wrong login (the authentication error, thrown at once).
import * as fs from 'node:fs';
import { readProperties, scramLogin } from './stand-in-kafka-client.mjs';

const fail = (message) => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};

for (const variable of ['KAFKA_STATE', 'KAFKA_NETWORK']) {
  if (process.env[variable] === undefined) fail(`stand-in kafka-broker-api-versions.sh: ${variable} is not set`);
}

// Its options: --bootstrap-server (required) and --command-config, each with its value.
const options = {};
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const flag = args[i];
  if (flag === '--bootstrap-server' || flag === '--command-config') options[flag] = args[++i];
  else fail(`${flag} is not a recognized option`);
}
if (options['--bootstrap-server'] === undefined) fail('Missing required argument "[bootstrap-server]"');

const network = JSON.parse(fs.readFileSync(process.env.KAFKA_NETWORK, 'utf8'));
const state = JSON.parse(fs.readFileSync(process.env.KAFKA_STATE, 'utf8'));
const properties = options['--command-config'] === undefined ? {} : readProperties(options['--command-config']);

// The bootstrap list: `host:port`, comma-separated; the hosts DNS resolves, in order.
const bootstrap = [];
for (const url of options['--bootstrap-server'].split(',').map((part) => part.trim()).filter((part) => part !== '')) {
  const match = /^(.+):(\d+)$/.exec(url);
  if (!match) fail(`Invalid url in bootstrap.servers: ${url}`);
  if (network.resolvable.includes(match[1].toLowerCase())) bootstrap.push({ host: match[1], port: Number(match[2]) });
}
if (bootstrap.length === 0) fail('No resolvable bootstrap urls given in bootstrap.servers');

const node = ({ id, host, port }) => `${host}:${port} (id: ${id} rack: null isFenced: false)`;
const unanswered = () => fail(`Request METADATA failed on brokers [${bootstrap.map(({ host, port }) => node({ id: -1, host, port })).join(', ')}]`);
// The first bootstrap address that answers: a broker's listener there, else the request times out.
if (!bootstrap.some(({ host, port }) => network.listeners.includes(`${host.toLowerCase()}:${port}`))) unanswered();
const login = scramLogin(properties, state.users);
if (login.unanswered) unanswered();
if (!login.ok) fail(login.message);
if (network.brokers.length === 0) fail('stand-in kafka-broker-api-versions.sh: the metadata names no broker');
for (const broker of network.brokers) {
  process.stdout.write(`${node(broker)} -> (\n\tApiVersions(18): 0 to 4 [usable: 4],\n\tMetadata(3): 0 to 13 [usable: 13]\n)\n`);
}
