import { BROKER, PORTS } from './contract';
import { DATABASE, FLAGGER_LOAD_TESTER } from './choices';
import { CLUSTER_DNS, MONITORING_SELECTOR_LABEL } from './upstream';

/**
 * Every name and id the platform derives, in one place so every layer derives them alike:
 * object names from an application's name, the files of the rendered and the encrypted
 * trees, the smoke image's variables. Imports only the contract.
 */

/** 2.1: `<registry>/<project>/<application>:<tag>`. */
export function imageReference(registry: string, project: string, application: string, tag: string): string {
  return `${registry}/${project}/${application}:${tag}`;
}

/** The parts of an image reference, `<repository>[:<tag>][@<digest>]`. */
export interface ImageReferenceParts {
  /** `<registry>/<path>`: a registry's port stays here. */
  readonly repository: string;
  /** The tag, when the reference names one. */
  readonly tag?: string;
  /** The digest (`<algorithm>:<hex>`), when the reference names one. */
  readonly digest?: string;
}

/**
 * An image reference read back into its parts (the inverse of imageReference): the tag
 * follows the last `:` after the last `/`, so `registry:5000/app` has none, and a digest
 * follows `@` (the distribution project's reference grammar, reference/regexp.go).
 */
export function parseImageReference(reference: string): ImageReferenceParts {
  const at = reference.indexOf('@');
  const named = at < 0 ? reference : reference.slice(0, at);
  const digest = at < 0 ? {} : { digest: reference.slice(at + 1) };
  const colon = named.lastIndexOf(':');
  if (colon <= named.lastIndexOf('/')) return { repository: named, ...digest };
  return { repository: named.slice(0, colon), tag: named.slice(colon + 1), ...digest };
}

/** The host of an `https://<host>` address. */
export function hostOf(url: string): string {
  return new URL(url).hostname;
}

/** 2.1: blue-green units are named `<application>-<unit>`. */
export function unitName(application: string, unit: string): string {
  return `${application}-${unit}`;
}

/** Secret holding the TLS certificate cert-manager issues for the application's host. */
export function tlsSecretName(application: string): string {
  return `${application}-tls`;
}

/** The smoke test (4.1): its image, Job, ServiceAccount and Secret share this name. */
export function smokeName(application: string): string {
  return `${application}-smoke`;
}

/**
 * The Envoy proxy Deployment and Service of the application's Gateway, in Envoy Gateway's
 * namespace: fixed through the EnvoyProxy, so runbooks and checks can name them (Envoy
 * Gateway would otherwise generate `envoy-<namespace>-<gateway>-<hash>`).
 */
export function gatewayProxyName(application: string): string {
  return `${application}-gateway`;
}

/** A Service's address from any namespace (7, name resolution). */
export function serviceAddress(service: string, namespace: string): string {
  return `${service}.${namespace}.svc.${CLUSTER_DNS.domain}`;
}

/** Flagger's primary Deployment (canary mode) and the `app` label of its pods: `<application>-primary`. */
export function primaryName(application: string): string {
  return `${application}-primary`;
}

/** The schema migrations (1.3 step 5): their image and Job, `<application>-migrations`. */
export function migrationsName(application: string): string {
  return `${application}-${DATABASE.migrations.imageSuffix}`;
}

/**
 * The Jobs of the migrations image the live operations run in the application's namespace
 * (`rollback --level database`, and `emergency restore` migrating a restored database
 * forward): their pods' label `app`, `<application>-db-migrate`, and their names, made by the
 * API server from the prefix `<application>-db-` (five characters added).
 */
export function databaseMigrationJob(application: string): { readonly label: string; readonly namePrefix: string } {
  return { label: `${application}-db-migrate`, namePrefix: `${application}-db-` };
}

/**
 * Every name the platform derives from an application's name whatever its strategy, with
 * what it becomes; each is an object name and the value of an `app` or `version` label, so
 * each is held to the 63 characters of a label value (src/environments/validate.ts checks
 * them at the edge, with the names each strategy derives: its `derivedNames` in
 * src/environments/strategy-<strategy>.ts).
 */
export function derivedNames(application: string): ReadonlyArray<{ readonly name: string; readonly use: string }> {
  return [
    { name: application, use: 'Deployment, Service and label app' },
    { name: migrationsName(application), use: 'migrations Job and its label job-name' },
    { name: smokeName(application), use: 'smoke Job and its label app' },
    { name: tlsSecretName(application), use: 'TLS Secret' },
    { name: gatewayProxyName(application), use: 'Envoy proxy Deployment and Service of the Gateway' },
    { name: databaseSecret(application), use: 'database Secret' },
    { name: brokerClientSecret(application), use: 'broker Secret' },
    { name: databaseLoginSecret(application), use: 'SQL login Secret' },
    // Each application's own broker user is named after it.
    { name: brokerUserSecret(application), use: "its broker user's password Secret" },
    { name: databaseMigrationJob(application).label, use: 'label app of the migrations Jobs of npm run ops' },
    { name: `${databaseMigrationJob(application).namePrefix}xxxxx`, use: 'a migrations Job of npm run ops and its label job-name' },
  ];
}

/**
 * The live operations' roles (`npm run ops`): the prefix of the readers' and the operators'
 * roles (src/cluster/operations-role.ts), and the name of the broker chart's Role that reads the
 * users' password Secrets, which the bootstrap binds to the operators' group.
 */
export const OPERATIONS_ROLE = 'platform-gitops-operations';

/** The Secret with a broker user's password, in the cluster's namespace (KafkaUser `valueFrom`). */
export function brokerUserSecret(user: string): string {
  return `${user}-broker-user`;
}

/** The application's connection string, in its namespace. */
export function databaseSecret(application: string): string {
  return `${application}-database`;
}

/** The application's broker credentials (user name and password), in its namespace. */
export function brokerClientSecret(application: string): string {
  return `${application}-broker`;
}

/** The application's SQL login (user name and password) in the database's namespace, read by the setup Job. */
export function databaseLoginSecret(application: string): string {
  return `${application}-sql-login`;
}

/** 4.1 step 5: the broker's bootstrap address. */
export const DEFAULT_BOOTSTRAP_SERVERS = `${BROKER.bootstrapService}:${PORTS.broker}`;

/**
 * The environment variables the smoke test reads: credentials never come from flags (they
 * would show in process listings) and, in the cluster, come from a Secret.
 */
export const SMOKE_VARIABLES = {
  username: 'SMOKE_USERNAME',
  password: 'SMOKE_PASSWORD',
  databaseHost: 'DATABASE_HOST',
  databasePort: 'DATABASE_PORT',
  databaseUser: 'DATABASE_USER',
  databasePassword: 'DATABASE_PASSWORD',
  databaseName: 'DATABASE_NAME',
  databaseTrustServerCertificate: 'DATABASE_TRUST_SERVER_CERTIFICATE',
  bootstrapServers: 'KAFKA_BOOTSTRAP_SERVERS',
  brokerUsername: 'KAFKA_USERNAME',
  brokerPassword: 'KAFKA_PASSWORD',
} as const;

/**
 * The Helm release names of the infrastructure, one per row of src/infrastructure/releases.ts
 * (which reads them from here): each is also the name of the Argo CD Application that installs
 * it, in the controller's namespace, so no application may take one.
 */
export const INFRASTRUCTURE_RELEASE_NAMES = {
  gatewayApiCrds: 'gateway-crds',
  certManager: 'cert-manager',
  envoyGateway: 'envoy-gateway',
  argoCd: 'argocd',
  // kube-prometheus-stack labels what it selects with its release name.
  kubePrometheusStack: MONITORING_SELECTOR_LABEL.value,
  flagger: 'flagger',
  flaggerLoadTester: FLAGGER_LOAD_TESTER.service,
  strimziOperator: 'strimzi-kafka-operator',
} as const;
