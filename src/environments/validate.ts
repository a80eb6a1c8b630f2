import type * as z from 'zod';
import { KUBERNETES_LIMITS, SQL_SERVER_BUILT_INS } from '../contract/upstream';
import { DEFAULT_PROJECT, GITOPS_CHART_ID, PLATFORM_CHART_IDS, releaseProject, ROOT_APPLICATION } from '../contract/platform-charts';
import { ConfigError } from '../base/errors';
import { derivedNames, gatewayProxyName, INFRASTRUCTURE_RELEASE_NAMES } from '../contract/naming';
import { compareText } from '../base/text-order';
import { strategyDerivedNames } from './strategy-registry';
import { issuerName } from './infrastructure-schema';
import {
  type Application,
  type ApplicationValues,
  applicationValuesSchema,
  DEFAULT_APPLICATION_ACL_OPERATIONS,
  type Environment,
  type EnvironmentValues,
  environmentValuesSchema,
} from './schema';
import { sectionMessage } from './fields';
import { ENVIRONMENT_VALUES_FILE, JSON_SCHEMA_FILES, ValuesFile, type ValuesTexts, VALUES_DIR } from './values-file';

/** `a.b[0].c`, the way a person finds the field in the file. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`))
    .join('');
}

function formatValue(input: unknown): string {
  if (input === undefined || (typeof input === 'object' && input !== null)) return '';
  return ` ${JSON.stringify(input)}`;
}

/** The value at `path` in what the person wrote (zod does not always report it). */
function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let value: unknown = data;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** One line per zod issue: `<where>: <path> <value> <rule>`; `where` names file and line. */
export function formatIssue(where: (path: readonly PropertyKey[]) => string, issue: z.core.$ZodIssue, data: unknown): string {
  if (issue.code === 'unrecognized_keys') {
    const field = issue.path.length > 0 ? `${formatPath(issue.path)}: ` : '';
    return `${where([...issue.path, issue.keys[0]!])}: ${field}unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys
      .map((key) => JSON.stringify(key))
      .join(', ')} (the schema does not name ${issue.keys.length > 1 ? 'them' : 'it'}; check the spelling)`;
  }
  const field = issue.path.length > 0 ? formatPath(issue.path) : '(file)';
  const input = issue.input !== undefined && typeof issue.input !== 'object' ? issue.input : valueAt(data, issue.path);
  return `${where(issue.path)}: ${field}${formatValue(input)} ${issue.message}`;
}

/** Parse and check one values file against its schema; problems name file, line and field. */
function parseValues<S extends z.ZodType>(file: ValuesFile, schema: S, jsonSchema: string, problems: string[]): z.output<S> | undefined {
  const syntax = [...file.syntaxProblems()];
  if (syntax.length === 0) syntax.push(...file.shapeProblems(jsonSchema));
  if (syntax.length > 0) {
    problems.push(...syntax);
    return undefined;
  }
  const data = file.data();
  const result = schema.safeParse(data ?? undefined, { reportInput: true, error: sectionMessage });
  if (!result.success) {
    problems.push(...result.error.issues.map((issue) => formatIssue((path) => `${file.file}:${file.lineOf(path)}`, issue, data)));
    return undefined;
  }
  return result.data;
}

/**
 * Names an application may not take: its name names its chart (`dist/<env>/<name>.yaml`),
 * its Argo CD Application and its secrets group (`secrets/<env>/<name>/`), which must not
 * be those of the platform's charts, the values file of the environment, the root
 * Application or an infrastructure release's Application (all in the namespace `argocd`), and
 * its AppProject (named after it) not one of the platform's.
 */
export const RESERVED_APPLICATION_NAMES: readonly string[] = [
  ...new Set([...PLATFORM_CHART_IDS, GITOPS_CHART_ID, ENVIRONMENT_VALUES_FILE.replace(/\.yaml$/, ''), ROOT_APPLICATION, ...Object.values(INFRASTRUCTURE_RELEASE_NAMES), DEFAULT_PROJECT, ...Object.values(INFRASTRUCTURE_RELEASE_NAMES).map(releaseProject)]),
].sort();

/** The application name a values file's name gives, checked against Kubernetes' limits. */
function applicationNameProblems(file: ValuesFile, name: string): string[] {
  const where = `${file.file}:1: (file name) ${JSON.stringify(name)}`;
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
    return [`${where} must be an application name: lower-case letters, digits and "-", starting and ending with a letter or digit`];
  }
  if (RESERVED_APPLICATION_NAMES.includes(name)) {
    return [
      `${where} must not be a name of the platform (${RESERVED_APPLICATION_NAMES.join(', ')}): ` +
        'an application names its chart file, Argo CD Application, AppProject and secrets folder',
    ];
  }
  if (SQL_SERVER_BUILT_INS.principals.some((principal) => principal.toLowerCase() === name)) {
    return [`${where} must not be a SQL Server built-in principal (${SQL_SERVER_BUILT_INS.principals.join(', ')}, in any case): an application's name is its SQL login`];
  }
  // The Envoy proxy of the application's Gateway is `<app>-gateway` in Envoy Gateway's namespace, where
  // the envoy-gateway release names its controller's Deployment, Service and ServiceAccount after itself
  // (envoyproxy/gateway charts/gateway-helm/templates/envoy-gateway-deployment.yaml, envoy-gateway-service.yaml).
  const releases: readonly string[] = Object.values(INFRASTRUCTURE_RELEASE_NAMES);
  if (releases.includes(gatewayProxyName(name))) {
    return [
      `${where} must not derive the Envoy proxy name ${JSON.stringify(gatewayProxyName(name))}: ` +
        `the infrastructure release ${gatewayProxyName(name)} names its own objects so (${releases.join(', ')} are taken)`,
    ];
  }
  const tooLong = [...derivedNames(name), ...strategyDerivedNames(name)].filter((derived) => derived.name.length > KUBERNETES_LIMITS.labelValue);
  if (tooLong.length === 0) return [];
  const longest = tooLong.reduce((a, b) => (b.name.length > a.name.length ? b : a));
  const fits = KUBERNETES_LIMITS.labelValue - (longest.name.length - name.length);
  return [
    `${where} has ${name.length} characters; at most ${fits} fit: it derives ${JSON.stringify(longest.name)} (${longest.use}), ` +
      `${longest.name.length} characters, over the ${KUBERNETES_LIMITS.labelValue} Kubernetes allows in a name or label value`,
  ];
}

interface EnvironmentFiles {
  readonly environment?: ValuesFile;
  readonly applications: ValuesFile[];
}

/**
 * Group `src/environments/<environment>/<file>.yaml` by environment folder. Any other entry of
 * an environment folder (`webapp.yml`, a folder) is a problem: read as nothing, it would
 * silently drop an application from dist/.
 */
function groupByEnvironment(texts: ValuesTexts, problems: string[]): Map<string, EnvironmentFiles> {
  const groups = new Map<string, { environment?: ValuesFile; applications: ValuesFile[] }>();
  for (const [file, text] of texts) {
    const match = new RegExp(`^${VALUES_DIR}/([^/]+)/([^/]+)\\.yaml$`).exec(file);
    if (match === null) {
      const stray = new RegExp(`^${VALUES_DIR}/[^/]+/(.+)$`).exec(file);
      if (stray !== null) {
        problems.push(
          `${file}:1: (file name) ${JSON.stringify(stray[1])} must be <application>.yaml or ${ENVIRONMENT_VALUES_FILE}: ` +
            'an environment folder holds values files only, and any other file or folder would be ignored',
        );
      }
      continue;
    }
    const group = groups.get(match[1]!) ?? { applications: [] };
    groups.set(match[1]!, group);
    if (`${match[2]}.yaml` === ENVIRONMENT_VALUES_FILE) group.environment = new ValuesFile(file, text);
    else group.applications.push(new ValuesFile(file, text));
  }
  return groups;
}

/** Rules across an environment's files: namespaces owned once, the environment's issuer. */
function crossFileProblems(app: ValuesFile, values: ApplicationValues, environment: EnvironmentValues): string[] {
  const problems: string[] = [];
  for (const [field, namespace] of [
    ['database.namespace', environment.database.namespace],
    ['broker.namespace', environment.broker.namespace],
  ] as const) {
    if (values.namespace === namespace) {
      problems.push(app.at(['namespace'], `namespace ${JSON.stringify(values.namespace)} must differ from ${field} of environment.yaml (each unit has its own namespace)`));
    }
  }
  const topics = environment.broker.topics.map((topic) => topic.name);
  values.broker?.acls?.forEach((acl, index) => {
    if (!topics.includes(acl.topic)) {
      problems.push(
        app.at(['broker', 'acls', index, 'topic'], `broker.acls[${index}].topic ${JSON.stringify(acl.topic)} must name a topic of broker.topics in environment.yaml (${topics.join(', ') || 'none'})`),
      );
    }
  });
  const rendered = issuerName(environment.infrastructure.issuer);
  if (values.tls.clusterIssuer !== rendered) {
    problems.push(
      app.at(
        ['tls', 'clusterIssuer'],
        `tls.clusterIssuer ${JSON.stringify(values.tls.clusterIssuer)} must name the environment's ClusterIssuer "${rendered}" (rendered from infrastructure.issuer in environment.yaml)`,
      ),
    );
  }
  return problems;
}

/** A consumer group of an environment, where it is written (or defaulted), as messages name it. */
interface ConsumerGroup {
  readonly group: string;
  readonly file: ValuesFile;
  readonly path: readonly PropertyKey[];
  /** `<field> <value>`, with a note when the value is a default. */
  readonly label: string;
}

/**
 * A broker user reads with its consumer group as a PREFIX pattern (src/constructs/broker-user.ts),
 * so a group that equals or starts another's reads that one's offsets too: refuse the shorter
 * (or, when equal, the later), naming the other.
 */
function consumerGroupProblem(earlier: ConsumerGroup, later: ConsumerGroup): string | undefined {
  const [prefix, other] = later.group.length <= earlier.group.length ? [later, earlier] : [earlier, later];
  if (!other.group.startsWith(prefix.group)) return undefined;
  const equal = prefix.group === other.group;
  return prefix.file.at(
    prefix.path,
    `${prefix.label} must ${equal ? 'differ from' : 'not be a prefix of'} another consumer group (groups are granted as prefixes): ` +
      `${other.file.file} ${other.label} ${equal ? 'has it too' : 'starts with it'}`,
  );
}

/**
 * Validate the values files of every environment of the platform, and the rules that span
 * files: each environment of the order has a folder with `environment.yaml` and at least
 * one application file, applications of an environment own their names, namespaces,
 * databases and broker users alone, no folder is outside the order, hosts are unique, no live environment
 * comes after a planned one. Throws one ConfigError listing every problem, each naming
 * file, line and field.
 */
export function validateEnvironments(order: readonly string[], texts: ValuesTexts): Environment[] {
  const problems: string[] = [];
  const groups = groupByEnvironment(texts, problems);
  const seen = new Set<string>();
  for (const name of order) {
    if (seen.has(name)) problems.push(`order: "${name}" appears more than once in the environment order`);
    seen.add(name);
    if (groups.get(name)?.environment === undefined) problems.push(`${VALUES_DIR}/${name}/${ENVIRONMENT_VALUES_FILE}: missing: every environment of the order has one`);
  }
  for (const name of groups.keys()) {
    if (!seen.has(name)) problems.push(`${VALUES_DIR}/${name}/: environment "${name}" is missing from the environment order (${order.join(', ')})`);
  }

  const environments: Environment[] = [];
  const statusFiles = new Map<string, ValuesFile>();
  const hostOwners = new Map<string, string>();
  for (const name of seen) {
    const group = groups.get(name);
    if (group?.environment === undefined) continue;
    const values = parseValues(group.environment, environmentValuesSchema, JSON_SCHEMA_FILES.environment, problems);
    if (group.applications.length === 0) {
      problems.push(`${VALUES_DIR}/${name}/: no application values file (<application>.yaml beside ${ENVIRONMENT_VALUES_FILE}); every environment runs at least one`);
    }
    const applications: Application[] = [];
    let complete = values !== undefined;
    // Owners of what two applications of one environment must not share, with the file that took it first.
    const owners = { namespace: new Map<string, string>(), database: new Map<string, string>() };
    const brokerUsers = new Map((values?.broker.users ?? []).map((user) => [user.name, `${group.environment!.file} (broker.users)`]));
    const consumerGroups: ConsumerGroup[] = [];
    values?.broker.users.forEach((user, index) => {
      if (user.consumerGroup === undefined) return;
      const path = ['broker', 'users', index, 'consumerGroup'];
      const written: ConsumerGroup = { group: user.consumerGroup, file: group.environment!, path, label: `${formatPath(path)} ${JSON.stringify(user.consumerGroup)}` };
      for (const earlier of consumerGroups) {
        const problem = consumerGroupProblem(earlier, written);
        if (problem !== undefined) problems.push(problem);
      }
      consumerGroups.push(written);
    });
    for (const appFile of group.applications) {
      const applicationName = appFile.file.split('/').pop()!.replace(/\.yaml$/, '');
      const nameProblems = applicationNameProblems(appFile, applicationName);
      problems.push(...nameProblems);
      const application = parseValues(appFile, applicationValuesSchema, JSON_SCHEMA_FILES.application, problems);
      if (values === undefined || application === undefined || nameProblems.length > 0) {
        complete = false;
        continue;
      }
      const crossProblems = crossFileProblems(appFile, application, values);
      const host = new URL(application.url).hostname;
      const hostOwner = hostOwners.get(host);
      if (hostOwner !== undefined) crossProblems.push(appFile.at(['url'], `url ${JSON.stringify(application.url)} must be unique: ${hostOwner} already serves ${host}`));
      else hostOwners.set(host, appFile.file);
      const databaseName = application.database?.name ?? applicationName;
      const databasePath = application.database?.name === undefined ? [] : ['database', 'name'];
      if (SQL_SERVER_BUILT_INS.databases.some((system) => system === databaseName.toLowerCase())) {
        crossProblems.push(
          appFile.at(databasePath, `database.name ${JSON.stringify(databaseName)} must not be a SQL Server system database (${SQL_SERVER_BUILT_INS.databases.join(', ')})`),
        );
      }
      // SQL Server's default collation compares names case-insensitively: WEBAPP is webapp's database.
      for (const [kind, key, value, field, path, note] of [
        ['namespace', application.namespace, application.namespace, 'namespace', ['namespace'], ''],
        ['database', databaseName.toLowerCase(), databaseName, 'database.name', databasePath, '; SQL Server compares names case-insensitively'],
      ] as const) {
        const owner = owners[kind].get(key);
        if (owner !== undefined) {
          crossProblems.push(appFile.at(path, `${field} ${JSON.stringify(value)} must be unique in ${name}: ${owner} already has it (each application has its own${note})`));
        } else owners[kind].set(key, appFile.file);
      }
      const userOwner = brokerUsers.get(applicationName);
      if (userOwner !== undefined) {
        crossProblems.push(
          appFile.at([], `(file name) ${JSON.stringify(applicationName)} is also a user in ${userOwner}: each application gets a broker user named after it; rename that user`),
        );
      } else brokerUsers.set(applicationName, appFile.file);
      const consumerGroup: ConsumerGroup = {
        group: application.broker?.consumerGroup ?? applicationName,
        file: appFile,
        path: application.broker?.consumerGroup === undefined ? [] : ['broker', 'consumerGroup'],
        label: `broker.consumerGroup ${JSON.stringify(application.broker?.consumerGroup ?? applicationName)}${application.broker?.consumerGroup === undefined ? " (default: the application's name)" : ''}`,
      };
      for (const earlier of consumerGroups) {
        const problem = consumerGroupProblem(earlier, consumerGroup);
        if (problem !== undefined) crossProblems.push(problem);
      }
      consumerGroups.push(consumerGroup);
      problems.push(...crossProblems);
      if (crossProblems.length > 0) {
        complete = false;
        continue;
      }
      // Every field as validated (the ones that go with the strategy included), with the defaults of the rest.
      const { database: _database, broker: _broker, ...fields } = application;
      applications.push({
        name: applicationName,
        ...fields,
        database: { name: databaseName },
        broker: {
          name: applicationName,
          acls: application.broker?.acls ?? values.broker.topics.map((topic) => ({ topic: topic.name, operations: [...DEFAULT_APPLICATION_ACL_OPERATIONS] })),
          consumerGroup: consumerGroup.group,
        },
        source: appFile.source(),
      });
    }
    if (!complete || values === undefined || applications.length === 0) continue;
    statusFiles.set(name, group.environment);
    environments.push({ ...values, name, applications: applications.sort((a, b) => compareText(a.name, b.name)) });
  }

  const firstPlanned = environments.findIndex((env) => env.status === 'planned');
  if (firstPlanned >= 0) {
    for (const env of environments.slice(firstPlanned + 1)) {
      if (env.status === 'live') {
        problems.push(
          statusFiles.get(env.name)!.at(
            ['status'],
            `status "live" must not come after planned environment "${environments[firstPlanned]!.name}" (promotion follows the order)`,
          ),
        );
      }
    }
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return environments;
}
