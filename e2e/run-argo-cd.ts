import * as path from 'node:path';
import { bootstrapManifests } from '../pulumi/bootstrap-manifests';
import { argoCdRedisSecret, argoCdServerSecret, loopbackClusterSecret, chartRepositorySecrets, startArgoCd, withProxy } from './argocd';
import { argoCdManifestsRepository, argoCdModuleDir, buildArgoCdKustomization } from './argo-cd-manifests';
import { E2eError } from '../src/base/errors';
import type { KubeObject } from './kube-client';
import { run } from './processes';
import { waitForCrdsServed } from './dry-run';
import { STAND_IN_PROVISIONER } from './stand-in-controllers';
import { chartsByRepository } from './stand-in-charts';
import { INFRASTRUCTURE_RELEASES, releaseKustomizationPath } from '../src/infrastructure/releases';
import type { RunContext } from './run-start';
import type { RunScope } from './run-scope';
import type { StartedPlane } from './run-plane';
import type { Served } from './run-serve';

/** The group the bootstrap grants the live operations' roles to, in the e2e; `--exec` runs as a member. */
export const OPERATORS_GROUP = 'platform-gitops-operators';

/** StorageClasses the environment's claims name: the cluster provides them, the harness stands in. */
function storageClasses(objects: readonly KubeObject[]): KubeObject[] {
  const names = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === 'storageClassName' && typeof v === 'string') names.add(v);
        else visit(v);
      }
    }
  };
  objects.forEach(visit);
  return [...names].sort().map((name) => ({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner: STAND_IN_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  }));
}

/** Argo CD installed and running. */
export interface InstalledArgoCd {
  /** What the Pulumi program applies for the environment (pulumi/bootstrap-manifests.ts). */
  readonly manifests: ReturnType<typeof bootstrapManifests>;
  /** The version of the Argo CD that runs: the tag of the manifests the platform installs. */
  readonly argocdVersion: string;
}

/**
 * Install Argo CD as the Pulumi bootstrap does (its namespace and its release's manifests with
 * the platform's patches) and start its processes on loopback.
 */
export async function installArgoCd(context: RunContext, scope: RunScope, cluster: StartedPlane, served: Served): Promise<InstalledArgoCd> {
  const { log, environment, projectRoot, rendered, toolchain, phaseEnded } = context;
  const { dir, supervisor } = scope;
  const { namespace, plane, client } = cluster;
  const { source, ageKey, git, hosts, publishing } = served;
  const manifests = bootstrapManifests(environment, { repositorySshPrivateKey: git.deployKey, sopsAgeKey: ageKey }, { operators: OPERATORS_GROUP });

  // 1. What the Pulumi bootstrap applies (ArgoCdInstallation): the environment's committed
  // kustomization of Argo CD, built against the pinned tag's manifests from the module the
  // toolchain builds Argo CD from (e2e/argo-cd-manifests.ts), CRDs first. The processes below
  // read its ConfigMaps (health checks, notifications); the `argocd` Application, which only
  // an operator syncs, syncs the same folder later.
  await client.apply(manifests.namespace as KubeObject);
  const argoCdManifests = argoCdManifestsRepository(argoCdModuleDir(projectRoot), path.join(dir, 'argo-cd-manifests'));
  const argoCdObjects = buildArgoCdKustomization(
    toolchain.bin('kustomize', 'kustomize'),
    path.join(source, releaseKustomizationPath(environment, INFRASTRUCTURE_RELEASES.argoCd)),
    argoCdManifests,
  );
  const isCrd = (object: KubeObject) => object.kind === 'CustomResourceDefinition';
  const crds = argoCdObjects.filter(isCrd);
  for (const crd of crds) await client.apply(crd);
  // The API server serves a CRD's kinds once it is Established: until then the AppProject and
  // the root Application the bootstrap applies next read as kinds it does not serve (seen with
  // --no-dry-run under load in CI, whose bootstrap follows at once).
  await waitForCrdsServed(client, crds, Math.max(context.startedAt + context.timeoutMs - Date.now(), 60_000));
  for (const object of argoCdObjects.filter((object) => !isCrd(object))) await client.apply(object);
  log(`Argo CD ${INFRASTRUCTURE_RELEASES.argoCd.manifests.version}'s manifests with the platform's patches: ${argoCdObjects.length} objects applied`);
  await client.apply(argoCdServerSecret(namespace));
  await client.apply(argoCdRedisSecret(namespace));
  await client.apply(loopbackClusterSecret(namespace));
  await client.apply(manifests.ageKeySecret as unknown as KubeObject);
  for (const storageClass of storageClasses(rendered)) await client.apply(storageClass);
  await startArgoCd({
    toolchain,
    supervisor,
    client,
    kubeconfig: plane.kubeconfig,
    namespace,
    dir: path.join(dir, 'argocd'),
    argoCdManifests,
    repoServer: argoCdObjects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'argocd-repo-server')!,
    knownHosts: git.knownHosts,
    tlsCertificates: new Map([...hosts, ...(publishing === undefined ? [] : [publishing.host])].map((host) => [host, plane.pki.ca.cert])),
  });
  // `argocd: v3.6.1+unknown`: the build knows its tag, not its commit.
  const argocdVersion = run(toolchain.bin('argocd', 'argocd'), ['version', '--client', '--short']).trim().replace(/^argocd:\s*/, '').replace(/\+unknown$/, '');
  log(`Argo CD ${argocdVersion}: repository server and application controller running`);
  // What runs is what the platform installs: the binary's tag is the manifests' tag.
  const installed = INFRASTRUCTURE_RELEASES.argoCd.manifests.version;
  if (argocdVersion !== installed) throw new E2eError(`the toolchain's Argo CD is ${argocdVersion}, the platform installs ${installed}'s manifests: rebuild toolchain/build.sh argocd`);
  phaseEnded('Argo CD started');
  return { manifests, argocdVersion };
}

/** What the bootstrap leaves to the stand-in controllers' loop. */
export interface Bootstrapped {
  /** The live operations' bindings in namespaces Argo CD creates later, applied once each exists (and taken off this list). */
  readonly laterAccess: KubeObject[];
}

/** Bootstrap the environment as the Pulumi program does: repository credentials, the AppProject, the root Application, the operators' access. */
export async function bootstrapEnvironment(context: RunContext, cluster: StartedPlane, served: Served, argoCd: InstalledArgoCd): Promise<Bootstrapped> {
  const { log, phaseEnded } = context;
  const { namespace, client } = cluster;
  const { proxyPort } = served;
  const { manifests } = argoCd;
  // 2. Repository credentials, then the AppProject and the root Application (Pulumi: RepositoryCredentials, RootApplication).
  await client.apply(withProxy(manifests.repositorySecret as unknown as KubeObject, `socks5://127.0.0.1:${proxyPort}`));
  const chartRepositories = [...chartsByRepository().keys()].sort();
  for (const secret of chartRepositorySecrets(namespace, chartRepositories, `socks5://127.0.0.1:${proxyPort}`)) await client.apply(secret);
  if ('chartRegistrySecret' in manifests) await client.apply(withProxy(manifests.chartRegistrySecret as unknown as KubeObject, `socks5://127.0.0.1:${proxyPort}`));
  await client.apply(manifests.project as KubeObject);
  await client.apply(manifests.rootApplication as KubeObject);
  // The bindings in a namespace Argo CD creates (the broker's) wait for it, as the bootstrap's do.
  const inLaterNamespaces = (object: { metadata: { namespace?: string } }) => object.metadata.namespace !== undefined && object.metadata.namespace !== namespace;
  for (const object of manifests.operationsAccess.filter((object) => !inLaterNamespaces(object))) await client.apply(object as KubeObject);
  const laterAccess = manifests.operationsAccess.filter(inLaterNamespaces) as KubeObject[];
  log(`bootstrapped: namespace ${namespace}, repository Secret, age key Secret, AppProject ${manifests.project.metadata.name}, root Application ${manifests.rootApplication.metadata.name}`);
  phaseEnded('bootstrapped');
  return { laterAccess };
}
