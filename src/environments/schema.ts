import * as z from 'zod';
import { BLUE_GREEN } from '../contract/contract';
import { infrastructureSchema } from './infrastructure-schema';
import { aclSchema, brokerSchema, databaseSchema, SQL_DATABASE_NAME } from './data-services-schema';
import { dnsLabel, imageTag, namespaceName, resourcesSchema } from './fields';
import type { ValuesSource } from './values-file';

export { imageTag, resourcesSchema };

/**
 * The zod schemas of the values files (src/environments/<environment>/): `environment.yaml`
 * (what is not an application's: status, infrastructure, data services) and
 * `<application>.yaml` (one application in that environment). The only place where what a
 * person writes is checked; rules spanning files are in validate.ts. Every message is a
 * rule ("must ..."), so that the formatted error reads `<file>:<line>: <field> <value> <rule>`.
 */

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)+$/;
const REGISTRY = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:\d{1,5})?$/;
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
  }
});

/** Operations a broker user is granted when its ACLs are left out: the application reads and writes its topics. */
export const DEFAULT_APPLICATION_ACL_OPERATIONS = ['Read', 'Write', 'Describe'] as const;

const blueGreenUnit = (unit: string) =>
  z
    .strictObject({ tag: imageTag.meta({ description: `Image tag the ${unit} unit runs, v<major>.<minor>.<patch>.` }) })
    .meta({ description: `The ${unit} unit: its own Deployment of ${BLUE_GREEN.replicasPerUnit} pods. Default: not rendered.` })
    .optional();
const unitName = z.enum(BLUE_GREEN.units, { error: `must be one of ${BLUE_GREEN.units.join(', ')}` });

const rollingStrategy = z.strictObject({
  type: z.literal('rolling').meta({ description: 'Rolling update: the Deployment replaces its pods a few at a time.' }),
});

const blueGreenStrategy = z.strictObject({
  type: z.literal('blue-green').meta({ description: 'Blue-green: two units side by side; the Service selects the active one.' }),
  blueGreen: z
    .strictObject({
      active: unitName.meta({ description: `The unit the Service selects (${BLUE_GREEN.units.join(' or ')}); it must be rendered.` }),
      units: z
        .strictObject({ blue: blueGreenUnit('blue'), green: blueGreenUnit('green') })
        .meta({ description: 'The units rendered side by side, each with its own image tag; at least one.' }),
    })
    .meta({ description: 'Which units run and which one serves.' })
    .superRefine((blueGreen, ctx) => {
      const rendered = BLUE_GREEN.units.filter((unit) => blueGreen.units[unit] !== undefined);
      if (rendered.length === 0) {
        ctx.addIssue({ code: 'custom', path: ['units'], input: blueGreen.units, message: 'must render at least one unit (blue or green)' });
      } else if (!rendered.includes(blueGreen.active)) {
        ctx.addIssue({
          code: 'custom',
          path: ['active'],
          input: blueGreen.active,
          message: `is not one of the rendered units (${rendered.join(', ')})`,
        });
      }
    }),
});

const canaryStrategy = z.strictObject({
  type: z.literal('canary').meta({ description: "Canary: Flagger shifts traffic to the new version step by step while its metrics hold." }),
  canary: z
    .strictObject({
      loadTest: z
        .boolean({ error: 'must be true or false' })
        .meta({
          description:
            "Send synthetic traffic from Flagger's load tester during analysis, so that an idle environment " +
            'still produces the request metrics the thresholds read. Default: false.',
        })
        .optional(),
    })
    .meta({ description: 'Settings of the canary analysis. Default: every setting at its default.' })
    .optional(),
});

export const STRATEGY_TYPES = ['rolling', 'blue-green', 'canary'] as const;
export type StrategyType = (typeof STRATEGY_TYPES)[number];

const strategySchema = z
  .discriminatedUnion('type', [rollingStrategy, blueGreenStrategy, canaryStrategy], {
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
      .meta({
        description:
          'Pods of the Deployment: required with the rolling and canary strategies; left out with blue-green, ' +
          `where each unit runs ${BLUE_GREEN.replicasPerUnit}.`,
      })
      .optional(),
    resources: resourcesSchema.meta({ description: "Requests and limits of the application's container." }),
    image: z
      .strictObject({
        registry: z
          .string({ error: 'is required and must be a string' })
          .regex(REGISTRY, { error: 'must be a registry host such as "registry.example.com" (no scheme, no path)' })
          .meta({ description: 'Registry host, e.g. "registry.example.com", with no scheme or path (2.1: {registry_url}).' }),
        project: z
          .string({ error: 'is required and must be a string' })
          .regex(IMAGE_PATH, { error: 'must be a registry project path such as "platform"' })
          .meta({ description: 'Project path inside the registry, e.g. "platform"; the image is <registry>/<project>/<application>.' }),
        tag: imageTag
          .meta({
            description:
              'The running version, v<major>.<minor>.<patch>: required with the rolling and canary strategies; ' +
              'left out with blue-green, whose units carry their own tags.',
          })
          .optional(),
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
  .superRefine((app, ctx) => {
    const blueGreen = app.strategy.type === 'blue-green';
    if (blueGreen && app.image.tag !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['image', 'tag'],
        input: app.image.tag,
        message: 'must be left out with the blue-green strategy: each unit in strategy.blueGreen.units carries its tag',
      });
    }
    if (blueGreen && app.replicas !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['replicas'],
        input: app.replicas,
        message: `must be left out with the blue-green strategy: each unit runs ${BLUE_GREEN.replicasPerUnit} pods (contract 2.1)`,
      });
    }
    if (!blueGreen && app.replicas === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['replicas'],
        input: undefined,
        message: `is required with the ${app.strategy.type} strategy and must be a whole number of at least 1`,
      });
    }
    if (!blueGreen && app.image.tag === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['image', 'tag'],
        input: undefined,
        message: `is required with the ${app.strategy.type} strategy and must look like v<major>.<minor>.<patch>`,
      });
    }
  })
  .meta({ description: 'One application in one environment; the file name is the application name.' });

/** What a person writes in `environment.yaml`. */
export type EnvironmentValuesInput = z.input<typeof environmentValuesSchema>;
export type EnvironmentValues = z.output<typeof environmentValuesSchema>;
/** What a person writes in `<application>.yaml`. */
export type ApplicationValuesInput = z.input<typeof applicationValuesSchema>;
export type ApplicationValues = z.output<typeof applicationValuesSchema>;


/** One application in one environment, validated, as charts and constructs receive it. */
export interface Application {
  /** Application name: its values file's name; Deployment, Service, Gateway and label `app` (2.1). */
  readonly name: string;
  /** Its own namespace (unique in the environment). */
  readonly namespace: string;
  /** `https://<host>`, its own host. */
  readonly url: string;
  /** Pods of the Deployment (rolling, canary); absent with blue-green. */
  readonly replicas?: number;
  readonly resources: Resources;
  readonly image: ApplicationValues['image'];
  readonly tls: ApplicationValues['tls'];
  readonly strategy: Strategy;
  /** Its database on the environment's SQL Server; the SQL login is the application's name. */
  readonly database: { readonly name: string };
  /** Its broker user, named after it. */
  readonly broker: BrokerUserConfig;
  /** Its values file and the line of each field there: later rules (a blue-green step) name the line. */
  readonly source: ValuesSource;
}

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
export type Strategy = ApplicationValues['strategy'];
export type Resources = z.output<typeof resourcesSchema>;
