import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { beforeAll, describe, expect, it } from 'vitest';
import * as bootstrapModule from '../pulumi/bootstrap';
import type { Bootstrap } from '../pulumi/bootstrap';
import { bootstrapManifests, chartRegistrySecretManifest } from '../pulumi/bootstrap-manifests';
import { ROOT, committedObjects, findObject } from './support';
import { INFRASTRUCTURE_RELEASES, releaseKustomizationPath } from '../src/infrastructure/releases';
import { operationsRoleManifests } from '../src/cluster/operations-role';
import { OPERATIONS_ROLE } from '../src/contract/naming';
import { loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { operationsScope } from '../src/synth/operations-scope';

interface Created {
  readonly type: string;
  readonly name: string;
  readonly inputs: any;
}

const created: Created[] = [];
const PROJECT = 'platform-gitops-bootstrap';
// Stand-ins, not key material: the point is that they stay secret end to end.
const SSH_KEY = 'stand-in for the deploy key';
const AGE_KEY = 'stand-in for the age key file';

function valueOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}

/** Pulumi's marker for a secret value crossing into the engine (sdk/nodejs/runtime/rpc.ts). */
const SECRET_SIGNATURE = '1b47061264138c4ac30d75fd1eb44270';

/** The value inside a secret the engine received; fails when it arrived in the clear. */
function secretValue(input: any): any {
  expect(input?.['4dabf18193072939515e22adb298388d']).toBe(SECRET_SIGNATURE);
  return input.value;
}

function resource(type: string): Created {
  const found = created.filter((r) => r.type === type);
  if (found.length !== 1) throw new Error(`expected one ${type}, found ${found.length}`);
  return found[0]!;
}

let stack: Bootstrap;

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        created.push({ type: args.type, name: args.name, inputs: args.inputs });
        return { id: `${args.name}-id`, state: args.inputs };
      },
      call: (args) => args.inputs,
    },
    PROJECT,
    'local',
    false,
  );
  pulumi.runtime.setAllConfig(
    {
      [`${PROJECT}:environment`]: 'local',
      [`${PROJECT}:repositorySshPrivateKey`]: SSH_KEY,
      [`${PROJECT}:sopsAgeKey`]: AGE_KEY,
      [`${PROJECT}:operatorsGroup`]: 'platform-operators',
      [`${PROJECT}:readersGroup`]: 'platform-readers',
    },
    [`${PROJECT}:repositorySshPrivateKey`, `${PROJECT}:sopsAgeKey`],
  );
  stack = bootstrapModule.bootstrap(bootstrapModule.readBootstrapConfig(new pulumi.Config(PROJECT)));
  // Let the mocked engine register every resource.
  await valueOf(stack.root.application.urn);
  await valueOf(stack.repository.secret.urn);
});

describe('the Pulumi bootstrap', () => {
  it('reads both keys from the stack configuration as secrets', async () => {
    const config = bootstrapModule.readBootstrapConfig(new pulumi.Config(PROJECT));
    expect(config.environment).toBe('local');
    expect(await pulumi.isSecret(pulumi.output(config.repositorySshPrivateKey))).toBe(true);
    expect(await pulumi.isSecret(pulumi.output(config.sopsAgeKey))).toBe(true);
  });

  it('creates the components with pkg:module:Type tokens, each child parented to its component', () => {
    const components = created.filter((r) => r.type.startsWith('platform-gitops:bootstrap:')).map((r) => r.type).sort();
    expect(components).toEqual([
      'platform-gitops:bootstrap:ArgoCdInstallation',
      'platform-gitops:bootstrap:OperationsAccess',
      'platform-gitops:bootstrap:RepositoryCredentials',
      'platform-gitops:bootstrap:RootApplication',
    ]);
    const resources = created.filter((r) => !r.type.startsWith('platform-gitops:') && !r.type.startsWith('kubernetes:rbac.')).map((r) => `${r.type} ${r.name}`).sort();
    expect(resources).toEqual([
      'kubernetes:argoproj.io/v1alpha1:AppProject root-project',
      'kubernetes:argoproj.io/v1alpha1:Application root-application',
      'kubernetes:core/v1:Namespace argocd-namespace',
      'kubernetes:core/v1:Secret argocd-age-key',
      'kubernetes:core/v1:Secret repository-secret',
      'kubernetes:kustomize/v2:Directory argocd-install',
    ]);
  });

  // The same roles as `npm run ops -- role` (src/cluster/operations-role.ts), bound to the stack's groups.
  it("creates the live operations' roles exactly as `npm run ops -- role` prints them, bound to the stack's operatorsGroup and readersGroup", () => {
    const rbac = created.filter((r) => r.type.startsWith('kubernetes:rbac.')).map((r) => r.inputs);
    const expected = operationsRoleManifests(operationsScope(loadEnvironments().find((e) => e.name === 'local')!, loadPlatform()), { operators: 'platform-operators', readers: 'platform-readers' });
    // (The mocked engine registers them in no set order.)
    const id = (m: any) => `${m.kind} ${m.metadata.namespace ?? ''}/${m.metadata.name}`;
    const sorted = (list: any[]) => [...list].sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0));
    expect(sorted(rbac)).toEqual(sorted(JSON.parse(JSON.stringify(expected))));
    // The binding of the broker chart's Role (the users' password Secrets), to the operators alone.
    const kept = created.find((r) => r.type === 'kubernetes:rbac.authorization.k8s.io/v1:RoleBinding' && r.inputs.metadata.name === OPERATIONS_ROLE)!;
    expect(kept.inputs.metadata.namespace).toBe('kafka');
    expect(kept.inputs.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'platform-operators' }]);
  });

  it('creates the argocd namespace', async () => {
    expect(resource('kubernetes:core/v1:Namespace').inputs.metadata.name).toBe('argocd');
    expect(await valueOf(stack.argocd.namespace.metadata.name)).toBe('argocd');
  });

  // The bootstrap is the namespace's one owner (no Application of the platform creates or
  // labels it), so its Pod Security labels are the bootstrap's: Argo CD's chart passes restricted.
  it('labels the argocd namespace restricted, with audit and warn at restricted', () => {
    expect(resource('kubernetes:core/v1:Namespace').inputs.metadata.labels).toEqual({
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/audit': 'restricted',
      'pod-security.kubernetes.io/warn': 'restricted',
    });
  });

  it("applies the environment's kustomization of Argo CD's release manifests, waiting for its objects", () => {
    const install = resource('kubernetes:kustomize/v2:Directory').inputs;
    expect(install.directory).toBe(path.join(ROOT, releaseKustomizationPath('local', INFRASTRUCTURE_RELEASES.argoCd)));
    expect(install.namespace).toBe('argocd');
    expect(install.skipAwait).toBe(false);
  });

  it('applies the folder the self-managed argocd Application syncs (its settings: test/argo-cd-kustomization.test.ts)', () => {
    const application = findObject(committedObjects('local'), 'Application', 'argocd');
    const install = resource('kubernetes:kustomize/v2:Directory').inputs;
    expect(path.relative(ROOT, install.directory)).toBe(application.spec.source.path);
    // The same pinned tag as the Application's remote base and the e2e's Argo CD.
    expect(fs.readFileSync(path.join(install.directory, 'kustomization.yaml'), 'utf8')).toContain(`?ref=${INFRASTRUCTURE_RELEASES.argoCd.manifests.version}\n`);
  });

  it('stores the age key file in the sops-age Secret, and the key stays secret', async () => {
    const age = created.find((r) => r.name === 'argocd-age-key')!.inputs;
    expect(age.metadata).toEqual({ name: 'sops-age', namespace: 'argocd' });
    expect(secretValue(age.stringData)).toEqual({ 'keys.txt': AGE_KEY });
    expect(await pulumi.isSecret(stack.argocd.ageKeySecret.stringData)).toBe(true);
  });

  it('stores the repository credentials for the SSH URL, labelled for Argo CD, and the key stays secret', async () => {
    const repository = created.find((r) => r.name === 'repository-secret')!.inputs;
    expect(repository.metadata.name).toBe('platform-gitops-repository');
    expect(repository.metadata.namespace).toBe('argocd');
    expect(repository.metadata.labels).toEqual({ 'argocd.argoproj.io/secret-type': 'repository' });
    expect(secretValue(repository.stringData)).toEqual({
      type: 'git',
      url: 'git@github.com:example/platform-gitops.git',
      sshPrivateKey: SSH_KEY,
    });
    expect(await pulumi.isSecret(stack.repository.secret.stringData)).toBe(true);
  });

  it('creates the AppProject exactly as rendered into dist/local/gitops.yaml, and the root Application that syncs that file', async () => {
    const committed = committedObjects('local');
    const project = created.find((r) => r.name === 'root-project')!.inputs;
    const root = created.find((r) => r.name === 'root-application')!.inputs;
    expect(root).toEqual(bootstrapModule.renderedBootstrapObjects('local').application);
    expect(committed.filter((o) => o.kind === 'Application').map((o) => o.metadata.name)).not.toContain(root.metadata.name);
    // The project the root belongs to (the infrastructure's), so the root can sync at once.
    expect(project).toEqual(findObject(committed, 'AppProject', root.spec.project));
    expect(root.spec.source.path).toBe('dist/local');
    expect(root.spec.source.directory.include).toBe('gitops.yaml');
  });

  it("gives Argo CD the registry of an environment's published charts only when it follows them, with a login when given", () => {
    // local follows the repository: no registry Secret.
    expect('chartRegistrySecret' in bootstrapManifests('local', { repositorySshPrivateKey: SSH_KEY, sopsAgeKey: AGE_KEY })).toBe(false);
    const secret = chartRegistrySecretManifest({ namespace: 'argocd', url: 'ghcr.io/example/charts/local', credentials: { username: 'reader', password: 'stand-in token' } });
    expect(secret.metadata).toEqual({ name: 'platform-gitops-charts', namespace: 'argocd', labels: { 'argocd.argoproj.io/secret-type': 'repository' } });
    // Argo CD's Helm OCI repository: the registry path without a scheme, enableOCI (argo-cd v3.6.1 util/db/repository_secrets.go).
    expect(secret.stringData).toEqual({ type: 'helm', name: 'platform-gitops-charts', url: 'ghcr.io/example/charts/local', enableOCI: 'true', username: 'reader', password: 'stand-in token' });
    expect(chartRegistrySecretManifest({ namespace: 'argocd', url: 'ghcr.io/example/charts/local' }).stringData).not.toHaveProperty('username');
  });

  it('refuses a stack whose environment is not one of the four', () => {
    expect(() => bootstrapModule.renderedBootstrapObjects('qa')).toThrow(
      'stack: environment "qa" must be one of local, testing, staging, production',
    );
  });
});

describe('the age key of the Pulumi bootstrap', () => {
  it('reads the key file init wrote when sopsAgeKeyFile names it, as a secret, and names a file it cannot read', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-pulumi-'));
    // Built from pieces, so that this file itself holds no key material for the scan to find.
    const key = `# public key: age1...\n${['AGE-SECRET-KEY-', '1STANDIN'].join('')}\n`;
    try {
      fs.writeFileSync(path.join(dir, 'local.key'), key, { mode: 0o600 });
      const read = (values: Record<string, string>) => {
        pulumi.runtime.setAllConfig(Object.fromEntries(Object.entries(values).map(([name, value]) => [`${PROJECT}:${name}`, value])), []);
        return bootstrapModule.readAgeKey(new pulumi.Config(PROJECT));
      };
      const fromFile = read({ sopsAgeKeyFile: path.join(dir, 'local.key') });
      expect(await pulumi.isSecret(fromFile)).toBe(true);
      expect(await valueOf(fromFile)).toBe(key);
      expect(() => read({ sopsAgeKeyFile: path.join(dir, 'absent.key') })).toThrow(`sopsAgeKeyFile ${path.join(dir, 'absent.key')}: cannot read it (ENOENT)`);
      fs.writeFileSync(path.join(dir, 'empty.key'), '# nothing\n');
      expect(() => read({ sopsAgeKeyFile: path.join(dir, 'empty.key') })).toThrow('holds no age secret key');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
