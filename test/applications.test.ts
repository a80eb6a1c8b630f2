import { describe, expect, it } from 'vitest';
import { SQL_SERVER_BUILT_INS } from '../src/contract/upstream';
import { APPLICATIONS_STAGE, DELIVERY_STAGES, PLATFORM_CHART_IDS, stageWave } from '../src/contract/platform-charts';
import { selectApplication } from '../src/environments';
import { UsageError } from '../src/base/errors';
import { RESERVED_APPLICATION_NAMES } from '../src/environments/validate';
import { RELEASE_ROWS } from '../src/infrastructure/releases';
import { gatewayProxyName } from '../src/contract/naming';
import { secretCatalog } from '../src/secrets/catalog';
import {
  environmentFilesCopy,
  environmentsOf,
  findObject,
  type K8sObject,
  refusalsAgainstCommittedDist,
  renderToObjects,
  type ValuesTree,
} from './support';

// Issue 13: several applications per environment. A second application is added in memory
// (a copy of an environment's first application file under another name, namespace and
// host), the way a person adds one: its values file only.

const SECOND = 'billing';

/** The values files with a second application `billing` in `environment`, copied from its first. */
function withSecondApplication(environment: string, files: ValuesTree = environmentFilesCopy()): ValuesTree {
  const [first] = Object.keys(files[environment]).filter((name) => name !== 'environment');
  const copy = structuredClone(files[environment][first!]);
  const url = new URL(copy.url);
  url.hostname = `${SECOND}.${url.hostname}`;
  files[environment][SECOND] = { ...copy, namespace: SECOND, url: url.origin };
  return files;
}

describe.each(['testing', 'staging', 'production'])('a second application in %s', (name) => {
  const environment = environmentsOf(withSecondApplication(name)).find((env) => env.name === name)!;
  const first = environment.applications.find((app) => app.name !== SECOND)!;
  const second = environment.applications.find((app) => app.name === SECOND)!;
  const files = renderToObjects(environment);
  const all = [...files.values()].flat();
  const objectsOf = (file: string) => files.get(`${file}.yaml`) ?? [];

  it('is chosen by --app; without it the commands ask which, and an unknown one names those there are', () => {
    const names = environment.applications.map((app) => app.name).join(', ');
    expect(selectApplication(environment, SECOND)).toBe(second);
    expect(() => selectApplication(environment, undefined)).toThrow(new UsageError(`${name} has 2 applications (${names}): name one with --app <application>`));
    expect(() => selectApplication(environment, 'nosuch')).toThrow(new UsageError(`--app "nosuch" is not an application of ${name}; choose one of ${names}`));
    expect(() => selectApplication(environment, undefined)).toThrow(UsageError);
  });

  it('is loaded beside the first, sorted by name, each with its own database and broker user', () => {
    expect(environment.applications.map((app) => app.name)).toEqual([first.name, SECOND].sort());
    expect(second.database.name).toBe(SECOND);
    expect(second.broker.name).toBe(SECOND);
    expect(second.broker.consumerGroup).toBe(SECOND);
  });

  it('renders its own chart file, holding only objects of its namespace, and leaves the first one as it was', () => {
    const own = objectsOf(SECOND);
    expect(own.length).toBeGreaterThan(0);
    for (const object of own) expect(object.metadata.namespace ?? object.metadata.name, `${object.kind}/${object.metadata.name}`).toBe(SECOND);
    // Its Namespace is the infrastructure chart's, labelled with it (one owner per namespace).
    expect(own.filter((o) => o.kind === 'Namespace')).toEqual([]);
    expect(findObject(objectsOf('infrastructure'), 'Namespace', SECOND).metadata.labels).toMatchObject({ app: SECOND, 'pod-security.kubernetes.io/enforce': 'restricted' });
    expect(JSON.stringify(objectsOf(first.name))).not.toContain(`"${SECOND}`);
    expect(objectsOf(first.name)).toEqual(renderToObjects(environmentsOf(environmentFilesCopy()).find((env) => env.name === name)!).get(`${first.name}.yaml`));
  });

  it('gets its own default deny and allows in its namespace', () => {
    const policies = objectsOf(SECOND).filter((o) => o.kind === 'NetworkPolicy');
    expect(policies.some((p) => JSON.stringify(p.spec.podSelector) === '{}' && p.spec.ingress === undefined && p.spec.egress === undefined)).toBe(true);
    expect(policies.length).toBeGreaterThan(1);
    for (const policy of policies) expect(policy.metadata.namespace).toBe(SECOND);
  });

  it('gets deployment.rules and a PodMonitor scoped to its own namespace and pods', () => {
    const rules = findObject(objectsOf(SECOND), 'PrometheusRule', 'deployment-rules');
    expect(rules.metadata.namespace).toBe(SECOND);
    for (const rule of rules.spec.groups[0].rules) {
      expect(rule.expr).toContain(`namespace="${SECOND}"`);
      expect(rule.expr).not.toContain(`namespace="${first.namespace}"`);
    }
    const monitor = findObject(objectsOf(SECOND), 'PodMonitor', SECOND);
    expect(monitor.spec.selector.matchExpressions[0].values).toEqual([SECOND, `${SECOND}-primary`]);
    // The environment-wide monitoring keeps only what is environment-wide: the routing.
    expect(objectsOf('monitoring').map((o) => o.kind).sort()).toEqual(['AlertmanagerConfig']);
  });

  it('gets its own child Application in the applications\' wave, with its own secrets group, in its own project', () => {
    const gitops = objectsOf('gitops');
    const application = findObject(gitops, 'Application', SECOND);
    expect(application.metadata.annotations?.['argocd.argoproj.io/sync-wave']).toBe(String(stageWave(APPLICATIONS_STAGE)));
    expect(findObject(gitops, 'Application', first.name).metadata.annotations?.['argocd.argoproj.io/sync-wave']).toBe(String(stageWave(APPLICATIONS_STAGE)));
    expect(stageWave(APPLICATIONS_STAGE)).toBeGreaterThan(Math.max(stageWave('database'), stageWave('broker')));
    // After the alert routing and the notifications' address: the first deployment is announced.
    expect(stageWave(APPLICATIONS_STAGE)).toBeGreaterThan(stageWave('monitoring'));
    expect(application.spec.sources.map((s: any) => s.path ?? s.directory)).toEqual([`dist/${name}`, `secrets/${name}/${SECOND}`]);
    expect(application.spec.sources[0].directory).toEqual({ include: `${SECOND}.yaml` });
    // Its own project, into its own namespace alone.
    expect(application.spec.project).toBe(SECOND);
    expect(findObject(gitops, 'AppProject', SECOND).spec.destinations.map((d: any) => d.namespace)).toEqual([SECOND]);
    const groups = secretCatalog(environment).filter((secret) => secret.group === SECOND);
    expect(groups.map((secret) => secret.name).sort()).toEqual([`${SECOND}-broker`, `${SECOND}-database`, `${SECOND}-smoke`, second.image.pullSecret].sort());
    for (const secret of groups) expect(secret.namespace).toBe(SECOND);
  });

  it('renders the cluster-scoped GatewayClass once, outside every application chart', () => {
    expect(all.filter((o) => o.kind === 'GatewayClass')).toHaveLength(1);
    expect(objectsOf('issuers').filter((o) => o.kind === 'GatewayClass')).toHaveLength(1);
    for (const app of environment.applications) {
      expect(objectsOf(app.name).filter((o) => o.metadata.namespace === undefined && o.kind !== 'Namespace')).toEqual([]);
    }
  });

  it('answers the ACME challenges of each host on that application\'s own Gateway', () => {
    const issuer = objectsOf('issuers').find((o) => o.kind === 'ClusterIssuer' && o.spec.acme !== undefined)!;
    const solvers = issuer.spec.acme.solvers.map((s: any) => [s.selector.dnsNames, s.http01.gatewayHTTPRoute.parentRefs[0].namespace]);
    expect(solvers).toEqual(environment.applications.map((app) => [[new URL(app.url).hostname], app.namespace]));
  });

  it('gets its own SQL login and database from the setup hook, its own broker user, and reaches both', () => {
    const database = objectsOf('database');
    const setup = findObject(database, 'Job', 'mssql-setup').spec.template.spec.containers[0];
    const sql = setup.env.filter((e: any) => e.value !== undefined).map((e: any) => e.value).join('\n');
    for (const app of environment.applications) expect(sql).toContain(`CREATE DATABASE [${app.database.name}]`);
    const backup = findObject(database, 'CronJob', 'mssql-backup').spec.jobTemplate.spec.template.spec.containers[0].command.join(' ');
    for (const app of environment.applications) expect(backup).toContain(`BACKUP DATABASE [${app.database.name}]`);
    const admitted = database
      .filter((o: K8sObject) => o.kind === 'NetworkPolicy')
      .flatMap((p: K8sObject) => (p.spec.ingress ?? []).flatMap((rule: any) => rule.from ?? []))
      .map((peer: any) => peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name']);
    expect(admitted).toEqual(expect.arrayContaining([first.namespace, SECOND]));
    const user = findObject(objectsOf('broker'), 'KafkaUser', SECOND);
    expect(user.spec.authorization.acls.map((acl: any) => acl.resource.name)).toEqual(expect.arrayContaining(environment.broker.topics.map((t) => t.name)));
  });
});

describe('the rules between applications of one environment, with file and line', () => {
  const refused = refusalsAgainstCommittedDist();

  it('refuses a second application in the namespace of the first', () => {
    expect(
      refused((files) => {
        withSecondApplication('testing', files);
        files.testing[SECOND].namespace = files.testing.webapp.namespace;
      }),
    ).toEqual([
      `src/environments/testing/${SECOND}.yaml: namespace ${JSON.stringify(environmentFilesCopy().testing.webapp.namespace)} must be unique in testing: src/environments/testing/webapp.yaml already has it (each application has its own)`,
    ]);
  });

  it('refuses a second application on the host of the first', () => {
    expect(
      refused((files) => {
        withSecondApplication('testing', files);
        files.testing[SECOND].url = files.testing.webapp.url;
      }),
    ).toEqual([
      `src/environments/testing/${SECOND}.yaml: url "${environmentFilesCopy().testing.webapp.url}" must be unique: src/environments/testing/webapp.yaml already serves ${new URL(environmentFilesCopy().testing.webapp.url).hostname}`,
    ]);
  });

  // SQL Server's default collation compares names case-insensitively: "WebApp" is webapp's database.
  it.each(['webapp', 'WebApp'])('refuses a second application with the database of the first, written %s', (database) => {
    expect(
      refused((files) => {
        withSecondApplication('testing', files);
        files.testing[SECOND].database = { name: database };
      }),
    ).toEqual([
      `src/environments/testing/${SECOND}.yaml: database.name ${JSON.stringify(database)} must be unique in testing: src/environments/testing/webapp.yaml already has it (each application has its own; SQL Server compares names case-insensitively)`,
    ]);
  });

  it.each(SQL_SERVER_BUILT_INS.databases.flatMap((name) => [name, name.toUpperCase()]))('refuses the system database %s as database.name', (database) => {
    expect(
      refused((files) => {
        files.testing.webapp.database = { name: database };
      }),
    ).toEqual([
      `src/environments/testing/webapp.yaml: database.name ${JSON.stringify(database)} must not be a SQL Server system database (${SQL_SERVER_BUILT_INS.databases.join(', ')})`,
    ]);
  });

  it.each(SQL_SERVER_BUILT_INS.principals.map((name) => name.toLowerCase()).filter((name) => /^[a-z0-9-]+$/.test(name)))(
    'refuses an application named %s: its SQL login would be a built-in principal of SQL Server',
    (principal) => {
      expect(
        refused((files) => {
          files.local[principal] = { ...structuredClone(files.local.webapp), namespace: 'other', url: 'https://other.local.platform.example.com' };
        }),
      ).toEqual([
        `src/environments/local/${principal}.yaml: (file name) ${JSON.stringify(principal)} must not be a SQL Server built-in principal (${SQL_SERVER_BUILT_INS.principals.join(', ')}, in any case): an application's name is its SQL login`,
      ]);
    },
  );

  // SQL Server's fixed server roles and fixed database roles are principals too
  // (learn.microsoft.com: server-level-roles, database-level-roles).
  it.each(['securityadmin', 'serveradmin', 'dbcreator', 'bulkadmin', 'db_owner', 'db_datareader'])('counts the fixed role %s among the built-in principals', (role) => {
    expect(SQL_SERVER_BUILT_INS.principals).toContain(role);
  });

  it('refuses an application whose Gateway proxy would take the name of an infrastructure release', () => {
    const release = RELEASE_ROWS.find((row) => row.name.endsWith(gatewayProxyName('')))!;
    const name = release.name.slice(0, -gatewayProxyName('').length);
    expect(
      refused((files) => {
        files.local[name] = { ...structuredClone(files.local.webapp), namespace: 'other', url: 'https://other.local.platform.example.com' };
      }),
    ).toEqual([
      `src/environments/local/${name}.yaml: (file name) ${JSON.stringify(name)} must not derive the Envoy proxy name ${JSON.stringify(release.name)}: the infrastructure release ${release.name} names its own objects so (${RELEASE_ROWS.map((row) => row.name).join(', ')} are taken)`,
    ]);
  });

  it('refuses a consumer group that is a prefix of another application\'s, naming both files', () => {
    // Groups are granted as PREFIX patterns (src/constructs/broker-user.ts): "web" reads every "webapp*".
    const first = Object.keys(environmentFilesCopy().testing).find((name) => name !== 'environment')!;
    const prefix = first.slice(0, -1);
    expect(
      refused((files) => {
        withSecondApplication('testing', files);
        files.testing[SECOND].broker = { ...files.testing[SECOND].broker, consumerGroup: prefix };
      }),
    ).toEqual([
      `src/environments/testing/${SECOND}.yaml: broker.consumerGroup ${JSON.stringify(prefix)} must not be a prefix of another consumer group (groups are granted as prefixes): src/environments/testing/${first}.yaml broker.consumerGroup ${JSON.stringify(first)} (default: the application's name) starts with it`,
    ]);
  });

  it('refuses an application\'s default consumer group equal to a broker user\'s group in environment.yaml', () => {
    const first = Object.keys(environmentFilesCopy().testing).find((name) => name !== 'environment')!;
    expect(
      refused((files) => {
        const topic = files.testing.environment.broker.topics[0].name;
        files.testing.environment.broker.users = [{ name: 'reporting', acls: [{ topic, operations: ['Read'] }], consumerGroup: `${first}-reports` }];
      }),
    ).toEqual([
      `src/environments/testing/${first}.yaml: broker.consumerGroup ${JSON.stringify(first)} (default: the application's name) must not be a prefix of another consumer group (groups are granted as prefixes): src/environments/testing/environment.yaml broker.users[0].consumerGroup ${JSON.stringify(`${first}-reports`)} starts with it`,
    ]);
  });

  it.each(RESERVED_APPLICATION_NAMES)('refuses an application named %s, a name of the platform', (reserved) => {
    const problems = refused((files) => {
      files.local[reserved] = { ...structuredClone(files.local.webapp), namespace: 'other', url: 'https://other.local.platform.example.com' };
    });
    if (reserved === 'environment') {
      // environment.yaml is the environment's own file: there the application is refused by its schema.
      expect(problems.length).toBeGreaterThan(0);
      return;
    }
    expect(problems).toEqual([
      `src/environments/local/${reserved}.yaml: (file name) "${reserved}" must not be a name of the platform (${RESERVED_APPLICATION_NAMES.join(', ')}): an application names its chart file, Argo CD Application, AppProject and secrets folder`,
    ]);
  });

  it('reserves every platform chart, the root Application and the infrastructure releases', () => {
    expect(RESERVED_APPLICATION_NAMES).toEqual(expect.arrayContaining([...PLATFORM_CHART_IDS, 'gitops', 'environment', 'root', 'argocd', 'cert-manager', 'flagger']));
    expect(DELIVERY_STAGES.map((stage) => stage.id).filter((id) => id !== APPLICATIONS_STAGE)).toEqual([...PLATFORM_CHART_IDS]);
  });

  it('refuses an environment folder with no application file, naming the folder', () => {
    expect(
      refused((files) => {
        delete files.staging.webapp;
      }),
    ).toEqual(['src/environments/staging/: no application values file (<application>.yaml beside environment.yaml); every environment runs at least one']);
  });
});
