import { RefusedError, UsageError } from '../../base/errors';
import { brokerPods, topicsSeenBy } from '../../cluster/broker';
import type { ClusterConnection } from '../../cluster/connection';
import { appliedMigrations, jobCondition, tables } from '../../cluster/database';
import { readyCondition, waitForPodsReady, waitForReady } from '../../cluster/readiness';
import { DATABASE, INFRASTRUCTURE_NAMESPACES } from '../../contract/choices';
import { BROKER, PORTS, WAITS_SECONDS } from '../../contract/contract';
import { migrationsName } from '../../contract/naming';
import { STRIMZI_OPERATOR_DEPLOYMENT } from '../../contract/upstream';
import { waitForRollout } from '../../cluster/workloads';
import { brokerUsers, type Environment } from '../../environments';
import { INFRASTRUCTURE_RELEASES, releaseNamespace } from '../../infrastructure/releases';
import type { CommandDefinition } from '../../tooling/cli';
import { isReleaseName, releaseParts } from './release-check';
import { LAG_USAGE, showConsumerLag } from './consumer-lag';
import { RELEASE_NAMES } from '../../infrastructure/release-versions';
import { oneOf, TARGET_OPTIONS, TARGET_USAGE, type OpsTarget, opsTarget } from './target';

const COMPONENTS = ['infrastructure', 'database', 'broker'] as const;
type Component = (typeof COMPONENTS)[number];

const USAGE = `usage: npm run ops -- check --env <environment> --component ${COMPONENTS.join('|')}|<release> [options]

The verification of a platform component (contract 1.3.4-1.3.6), each wait bounded by the
contract's timeout:
  infrastructure  the certificate manager's, the ingress controller's and the controller's
                  pods ready, in that order (${WAITS_SECONDS.infrastructurePodsReady} s each); every Certificate in every
                  namespace and every ClusterIssuer, with its Ready condition
  database        the SQL Server pod ready (${WAITS_SECONDS.databasePodReady} s); each application's migrations Job
                  complete; then, with sqlcmd inside the server's container, each application's
                  migration history (newest first) and its tables
  broker          the operator's Deployment rolled out (${WAITS_SECONDS.brokerOperatorReady} s), ${BROKER.clusterName} Ready (${WAITS_SECONDS.brokerClusterReady} s), every
                  KafkaTopic and KafkaUser with its Ready condition; then, with kafka-topics.sh
                  inside a broker's container, the topics each user sees on ${PORTS.broker} (its
                  password from its Secret, on stdin), exactly those its ACLs allow
  <release>       (1.3.7, after an upgrade) one infrastructure release (${RELEASE_NAMES.join(', ')}):
                  the pods of its namespace ready (${WAITS_SECONDS.infrastructurePodsReady} s), and its controller's containers
                  running the image the release table says its version ships
${TARGET_USAGE}
  --component <name>     ${COMPONENTS.join(', ')} or a release (required)
${LAG_USAGE}
Exit code: 0 the component is ready, 1 it is not (each part named, with why), 2 bad arguments.`;

const OPTIONS = { ...TARGET_OPTIONS, component: { type: 'string' }, lag: { type: 'boolean', default: false } } as const;

/** One part of a check: what, whether it holds, and the detail. */
interface Part {
  readonly part: string;
  readonly ok: boolean;
  readonly detail: string;
}

async function listReady(cluster: ClusterConnection, apiVersion: string, kind: string, namespace?: string): Promise<Part[]> {
  return (await cluster.list(apiVersion, kind, namespace)).map((object) => {
    const { ready, detail } = readyCondition(object);
    return { part: `${kind} ${object.metadata.namespace === undefined ? '' : `${object.metadata.namespace}/`}${object.metadata.name}`, ok: ready, detail };
  });
}

/** A part read inside the database server; a failed query is the part's failure, with sqlcmd's message. */
async function sqlPart(part: string, read: () => Promise<{ ok: boolean; detail: string }>): Promise<Part> {
  try {
    return { part, ...(await read()) };
  } catch (error) {
    if (!(error instanceof RefusedError)) throw error;
    return { part, ok: false, detail: error.message };
  }
}

async function podsPart(target: OpsTarget, label: string, namespace: string, timeoutSeconds: number): Promise<Part> {
  const result = await waitForPodsReady(target.cluster, namespace, timeoutSeconds, target.say);
  return { part: `${label}: pods of ${namespace} ready`, ok: result.ok, detail: result.ok ? result.state : result.reason! };
}

const CHECKS: Readonly<Record<Component, (target: OpsTarget, environment: Environment) => Promise<Part[]>>> = {
  // 1.3.4: certificate manager, ingress controller, controller, in that order; then the certificates and the issuer.
  async infrastructure(target) {
    const parts: Part[] = [];
    const order = [
      ['certificate manager', INFRASTRUCTURE_NAMESPACES.certificateManager],
      ['ingress controller', INFRASTRUCTURE_NAMESPACES.ingressController],
      ['controller', target.controllerNamespace],
    ] as const;
    for (const [label, namespace] of order) parts.push(await podsPart(target, label, namespace, WAITS_SECONDS.infrastructurePodsReady));
    const certificates = await listReady(target.cluster, 'cert-manager.io/v1', 'Certificate');
    const issuers = await listReady(target.cluster, 'cert-manager.io/v1', 'ClusterIssuer');
    if (issuers.length === 0) parts.push({ part: 'ClusterIssuer', ok: false, detail: 'none exists' });
    return [...parts, ...certificates, ...issuers];
  },
  // 1.3.5: the server's pod ready within 600 s; the migrations ran.
  async database(target, environment) {
    const parts = [await podsPart(target, 'SQL Server', environment.database.namespace, WAITS_SECONDS.databasePodReady)];
    for (const application of environment.applications) {
      const name = migrationsName(application.name);
      const job = await target.cluster.get('batch/v1', 'Job', name, application.namespace);
      const complete = job !== undefined && jobCondition(job, 'Complete') !== undefined;
      parts.push({ part: `Job ${application.namespace}/${name}`, ok: complete, detail: job === undefined ? 'does not exist (the Sync hook has not run, or was deleted after success)' : complete ? 'Complete' : 'not complete' });
    }
    if (!parts[0]!.ok) return parts;
    // Inside the server (sqlcmd in its container): each database's tables and migration history, newest first.
    const server = { cluster: target.cluster, namespace: environment.database.namespace };
    for (const application of environment.applications) {
      const database = application.database.name;
      parts.push(await sqlPart(`migration history of ${database} (${DATABASE.migrations.historyTable}, newest first)`, async () => {
        const applied = await appliedMigrations(server, database);
        return { ok: applied.length > 0, detail: applied.length === 0 ? 'no migration applied' : applied.join(', ') };
      }));
      parts.push(await sqlPart(`tables of ${database}`, async () => {
        const found = await tables(server, database);
        return { ok: found.length > 0, detail: found.length === 0 ? 'none' : found.join(', ') };
      }));
    }
    return parts;
  },
  // 1.3.6: the operator ready within 300 s, the cluster Ready within 600 s, then its topics and users.
  async broker(target, environment) {
    const namespace = releaseNamespace(INFRASTRUCTURE_RELEASES.strimziOperator, { environment, platform: target.platform });
    const rollout = await waitForRollout(target.cluster, namespace, [{ deployment: STRIMZI_OPERATOR_DEPLOYMENT, role: 'broker operator', serves: false }], WAITS_SECONDS.brokerOperatorReady, target.say);
    const operator = { part: `broker operator: Deployment ${namespace}/${STRIMZI_OPERATOR_DEPLOYMENT}`, ok: rollout.ok, detail: rollout.ok ? rollout.state : rollout.reason! };
    const brokerNamespace = environment.broker.namespace;
    const cluster = await waitForReady(target.cluster, 'kafka.strimzi.io/v1', 'Kafka', BROKER.clusterName, brokerNamespace, WAITS_SECONDS.brokerClusterReady, target.say);
    const parts = [
      operator,
      { part: `Kafka ${brokerNamespace}/${BROKER.clusterName}`, ok: cluster.ok, detail: cluster.ok ? cluster.state : cluster.reason! },
      ...(await listReady(target.cluster, 'kafka.strimzi.io/v1', 'KafkaTopic', brokerNamespace)),
      ...(await listReady(target.cluster, 'kafka.strimzi.io/v1', 'KafkaUser', brokerNamespace)),
    ];
    // The topics as a broker sees them on its listener 9092, user by user (each sees what its ACLs allow).
    const [pod] = await brokerPods(target.cluster, brokerNamespace);
    if (pod === undefined) return [...parts, { part: `topics on ${BROKER.clusterName}'s listener ${PORTS.broker}`, ok: false, detail: `no ready broker pod in ${brokerNamespace}` }];
    for (const user of brokerUsers(environment)) {
      parts.push({ part: `topics user ${user.name} sees on Pod ${brokerNamespace}/${pod.metadata.name}:${PORTS.broker}`, ...(await topicsSeenBy(target.cluster, brokerNamespace, pod.metadata.name, user)) });
    }
    return parts;
  },
};

/** `npm run ops -- check`: is a platform component ready, as the contract verifies it. */
export const CHECK: CommandDefinition<typeof OPTIONS> = {
  name: 'ops check',
  usage: USAGE,
  options: OPTIONS,
  async run(values, _positionals, context) {
    const release = isReleaseName(values.component) ? values.component : undefined;
    const component = release ?? oneOf(values.component, [...COMPONENTS, ...RELEASE_NAMES], '--component');
    if (values.lag && component !== 'broker') throw new UsageError('--lag goes with --component broker');
    const target = opsTarget(values, context);
    if (values.lag) return showConsumerLag(target, context);
    const parts = release !== undefined ? await releaseParts(target, target.environment, release) : await CHECKS[component as Component](target, target.environment);
    for (const part of parts) target.say(`${part.ok ? 'PASS' : 'FAIL'} ${part.part}: ${part.detail}`);
    const failed = parts.filter((part) => !part.ok);
    target.say(failed.length === 0 ? `${target.environment.name}: ${component} ready` : `${target.environment.name}: ${component} not ready: ${failed.map((part) => part.part).join(', ')}`);
    target.result({ environment: target.environment.name, component, parts, passed: failed.length === 0 });
    return failed.length === 0 ? 0 : 1;
  },
};
