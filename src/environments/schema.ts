import * as z from 'zod';
import { checkWorkload, STRATEGY_SCHEMAS, STRATEGY_TYPES, type StrategyType, type Workload, workloadFieldDescription } from '../strategies/values-registry';
import { infrastructureSchema } from './infrastructure-schema';
import { aclSchema, brokerSchema, databaseSchema, SQL_DATABASE_NAME } from './data-services-schema';
import { dnsLabel, imageTag, namespaceName, ociRegistry, resourcesSchema } from './fields';
import type { ValuesSource } from './values-file';

export { imageTag, resourcesSchema };

/**
 * The zod schemas of the values files (src/environments/<environment>/): `environment.yaml`
 * (what is not an application's: status, infrastructure, data services) and
 * `<application>.yaml` (one application in that environment). The only place where what a
 * person writes is checked; the `strategy:` section and the fields that go with it come from
 * each strategy's values module (src/strategies/values-registry.ts), rules spanning files are
 * in validate.ts. Every message is a rule ("must ..."), so that the formatted error reads
 * `<file>:<line>: <field> <value> <rule>`.
 */

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)+$/;
/** A registry host (DNS labels of at most 63 characters, 253 in all), with a port 1-65535 if any. */
const REGISTRY = /^(?=[^:]{1,253}(:|$))[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*(:([1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5]))?$/;
/** The most a Deployment's replicas hold: the API's int32. */
const MAX_REPLICAS = 2_147_483_647;
const IMAGE_PATH = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$/;

/** The application's address: one HTTPS origin per application and environment (1.2). */
const baseUrl = z.string({ error: 'is required and must be a string' }).superRefine((text, ctx) => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    ctx.addIssue({ code: 'custom', input: text, message: 'must be an absolute URL such as "https://app.example.com"' });
    return;
  }
  if (url.protocol !== 'https:') {
    ctx.addIssue({ code: 'custom', input: text, message: 'must use https:// (the application is served over TLS only)' });
  } else if (!HOSTNAME.test(url.hostname) || url.port !== '' || url.username !== '' || url.password !== '') {
    ctx.addIssue({ code: 'custom', input: text, message: 'must name a lower-case DNS host with no port or credentials' });
  } else if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || text.endsWith('/')) {
    ctx.addIssue({ code: 'custom', input: text, message: 'must be an origin only, with no path, query or trailing "/"' });
  } else if (text !== `https://${url.hostname}`) {
    // The URL parser forgives what the rendered host would not hold as written: upper case, a
    // default port, an empty query or fragment, a tab, a percent-encoded letter.
    ctx.addIssue({ code: 'custom', input: text, message: `must be written as the origin it is, https://${url.hostname}` });
  }
});

/** Operations a broker user is granted when its ACLs are left out: the application reads and writes its topics. */
export const DEFAULT_APPLICATION_ACL_OPERATIONS = ['Read', 'Write', 'Describe'] as const;

/** The `strategy:` section: one branch per delivery strategy of the registry (src/strategies/values-registry.ts). */
const strategySchema = z
  .discriminatedUnion('type', STRATEGY_SCHEMAS, {
    error: (issue) => (issue.code === 'invalid_union' ? `must be one of ${STRATEGY_TYPES.join(', ')}` : undefined),
  })
  .meta({ description: `How a new version reaches the pods (1.4): type is one of ${STRATEGY_TYPES.join(', ')}.` });

/** `src/environments/<environment>/environment.yaml`: what is not an application's. */
export const environmentValuesSchema = z
  .strictObject({
    status: z.enum(['live', 'planned'], { error: 'must be "live" or "planned"' }).meta({
      description: '"live" environments are synced; "planned" ones are rendered and reviewable but never synced on their own (1.2: production is planned).',
    }),
    autoSync: z
      .boolean({ error: 'must be true or false' })
      .meta({ description: 'Whether the controller syncs this environment from git without a person; false while status is "planned".' }),
    applicationSource: z
      .discriminatedUnion(
        'from',
        [
          z.strictObject({ from: z.literal('repository').meta({ description: 'Argo CD reads dist/<environment>/ in git.' }) }),
          z.strictObject({
            from: z.literal('registry').meta({ description: "Argo CD installs each application's published chart from the registry." }),
            registry: ociRegistry.meta({ description: 'Where npm run publish pushes the charts: <registry>/<environment>/<application>.' }),
          }),
        ],
        { error: (issue) => (issue.code === 'invalid_union' ? 'must be "repository" or "registry" (which names a registry)' : undefined) },
      )
      .default({ from: 'repository' })
      .meta({
        description:
          'Where Argo CD reads each application\'s manifests: "repository" (dist/<environment>/ in git) or "registry" ' +
          '(the application\'s published chart, pinned to the version of src/environments/<environment>/chart-versions.json). Default: from: repository.',
      }),
    infrastructure: infrastructureSchema.meta({ description: 'Issuer and per-environment values of the infrastructure releases (src/infrastructure/).' }),
    database: databaseSchema.meta({ description: "The environment's SQL Server, its migrations and backups (1.3 step 5)." }),
    broker: brokerSchema.meta({ description: "The environment's Strimzi Kafka cluster, its topics and users (1.3 step 6)." }),
  })
  .superRefine((env, ctx) => {
    if (env.database.namespace === env.broker.namespace) {
      ctx.addIssue({
        code: 'custom',
        path: ['broker', 'namespace'],
        input: env.broker.namespace,
        message: 'must differ from database.namespace (each unit has its own namespace)',
      });
    }
    if (env.status === 'planned' && env.autoSync) {
      ctx.addIssue({
        code: 'custom',
        path: ['autoSync'],
        input: env.autoSync,
        message: 'must be false while status is "planned" (a planned environment is never synced automatically)',
      });
    }
  })
  .meta({ description: "One environment's values that are not an application's: status, infrastructure, data services." });

/** `src/environments/<environment>/<application>.yaml`: one application in one environment. */
export const applicationValuesSchema = z
  .strictObject({
    namespace: namespaceName.meta({ description: "The application's own namespace (2.1), unique in the environment." }),
    url: baseUrl.meta({ description: 'https://<host>: where the application is served in this environment, its own host (1.2).' }),
    replicas: z
      .number({ error: 'must be a number' })
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be at least 1' })
      .max(MAX_REPLICAS, { error: `must be at most ${MAX_REPLICAS} (a Deployment's replicas are an int32)` })
      .meta({ description: workloadFieldDescription('replicas', 'Pods of the Deployment') })
      .optional(),
    resources: resourcesSchema.meta({ description: "Requests and limits of the application's container." }),
    image: z
      .strictObject({
        registry: z
          .string({ error: 'is required and must be a string' })
          .regex(REGISTRY, { error: 'must be a registry host such as "registry.example.com" or "registry.example.com:5000" (no scheme, no path; DNS labels of at most 63 characters, 253 in all; a port 1-65535)' })
          .meta({ description: 'Registry host, e.g. "registry.example.com", with no scheme or path (2.1: {registry_url}).' }),
        project: z
          .string({ error: 'is required and must be a string' })
          .regex(IMAGE_PATH, { error: 'must be a registry project path such as "platform"' })
          .meta({ description: 'Project path inside the registry, e.g. "platform"; the image is <registry>/<project>/<application>.' }),
        tag: imageTag.meta({ description: workloadFieldDescription('tag', 'The running version, v<major>.<minor>.<patch>') }).optional(),
        pullSecret: dnsLabel.meta({ description: 'Secret in the application namespace holding the registry credentials (5.3).' }),
      })
      .meta({ description: "Where the application's image comes from." }),
    tls: z
      .strictObject({
        clusterIssuer: dnsLabel.meta({
          description: "cert-manager ClusterIssuer that signs the application's certificate: the environment's (infrastructure.issuer).",
        }),
      })
      .meta({ description: "The application's TLS certificate." }),
    strategy: strategySchema,
    database: z
      .strictObject({
        name: SQL_DATABASE_NAME.meta({ description: "The database's name on the server. Default: the application's name." }).optional(),
      })
      .meta({
        description:
          "The application's own database on the environment's SQL Server (1.3 step 5), created with its login " +
          "(the application's name) by the database chart's setup hook. Default: a database named after the application.",
      })
      .optional(),
    broker: z
      .strictObject({
        acls: z
          .array(aclSchema)
          .min(1, { error: 'must grant at least one ACL' })
          .meta({
            description:
              'What the user may do, topic by topic (topics of broker.topics in environment.yaml). ' +
              `Default: ${DEFAULT_APPLICATION_ACL_OPERATIONS.join(', ')} on every topic of the environment.`,
          })
          .optional(),
        consumerGroup: dnsLabel
          .meta({ description: "Consumer group (prefix) the user reads with. Default: the application's name." })
          .optional(),
      })
      .meta({
        description:
          "The application's own broker user (1.3 step 6), a KafkaUser named after it. Default: " +
          `${DEFAULT_APPLICATION_ACL_OPERATIONS.join(', ')} on every topic of broker.topics, consumer group the application's name.`,
      })
      .optional(),
  })
  .meta({ description: 'One application in one environment; the file name is the application name.' })
  // The fields that go with the strategy, by its own rules: the output is one variant per strategy.
  .transform((app, ctx) => {
    const checked = checkWorkload(app);
    if (checked.issues === undefined) return checked.values;
    for (const issue of checked.issues) ctx.issues.push({ code: 'custom', path: [...issue.path], input: issue.input, message: issue.message });
    return z.NEVER;
  });

/** What a person writes in `environment.yaml`. */
export type EnvironmentValuesInput = z.input<typeof environmentValuesSchema>;
export type EnvironmentValues = z.output<typeof environmentValuesSchema>;
/** What a person writes in `<application>.yaml`. */
export type ApplicationValuesInput = z.input<typeof applicationValuesSchema>;
export type ApplicationValues = z.output<typeof applicationValuesSchema>;


/** What every application has, whatever its strategy. */
interface ApplicationCommon {
  /** Application name: its values file's name; Deployment, Service, Gateway and label `app` (2.1). */
  readonly name: string;
  /** Its own namespace (unique in the environment). */
  readonly namespace: string;
  /** `https://<host>`, its own host. */
  readonly url: string;
  readonly resources: Resources;
  /** Where its image comes from; the tag that goes with the strategy is the Workload's. */
  readonly image: Omit<ApplicationValues['image'], 'tag'>;
  readonly tls: ApplicationValues['tls'];
  /** Its database on the environment's SQL Server; the SQL login is the application's name. */
  readonly database: { readonly name: string };
  /** Its broker user, named after it. */
  readonly broker: BrokerUserConfig;
  /** Its values file and the line of each field there: later rules (a blue-green step) name the line. */
  readonly source: ValuesSource;
}

/**
 * One application in one environment, validated, as charts and constructs receive it: one
 * variant per strategy (`strategy.type`), each with the `replicas` and `image.tag` its
 * strategy has (a number and a tag with rolling and canary; none with blue-green, whose
 * units carry theirs).
 */
export type Application = ApplicationCommon & Workload;

/** The applications in the strategy `type`. */
export type ApplicationOf<Type extends StrategyType> = Extract<Application, { readonly strategy: { readonly type: Type } }>;

/** A broker user: its name, ACLs and consumer group. */
export type BrokerUserConfig = EnvironmentValues['broker']['users'][number];

/**
 * A validated environment, as constructs and charts receive it: the environment's values,
 * `name` from its folder, and its applications (one per `<application>.yaml`, sorted by
 * name). Environment-wide parts (infrastructure, database server, broker) are shared.
 */
export interface Environment extends EnvironmentValues {
  /** The environment's name: its folder under src/environments and its place in the order. */
  readonly name: string;
  /** Every application of the environment, sorted by name; at least one. */
  readonly applications: readonly Application[];
}
export type Strategy = z.output<typeof strategySchema>;
export type Resources = z.output<typeof resourcesSchema>;
