import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMAGES } from '../src/contract/images';
import { loopbackClusterSecret, operatorSyncOperation, sidecarPlay } from '../e2e/argocd';
import { builtArgoCd, builtObject } from './argo-cd-build';
import { IN_CLUSTER } from '../src/constructs/argo-cd-sync-policy';
import { containerScript, runContainer } from '../e2e/sidecar';
import { SOPS_AGE, SOPS_PLUGIN } from '../src/contract/choices';
import { applicationState, converged, healthCauses } from '../src/cluster/argo-cd';
import { awaitsRefresh, FAIL_FAST_SECONDS, jobEnded, latestWarnings, ProgressingRefresher, REFRESH_AFTER_SECONDS, LastFailures, ProblemClock, runningHookJobs, settled, stillChanging, unmendable, withWarnings } from '../e2e/convergence';
import { parseSshUrl } from '../e2e/git-server';
import { podReferences, StandInControllers } from '../e2e/stand-in-controllers';
import { KWOK_ADMITTED_ANNOTATION } from '../e2e/kwok-stages';
import { ApiError, KubeClient, type KubeObject } from '../e2e/kube-client';
import { Pki } from '../e2e/pki';
import { STAND_INS } from '../e2e/stand-in-charts';
import { HELM_RELEASE_ROWS, INFRASTRUCTURE_RELEASES } from '../src/infrastructure/releases';
import { COMPONENT_SUPPORT, supportedKubernetesMinors } from '../src/infrastructure/supported-kubernetes';
import { UsageError } from '../src/base/errors';
import { runE2e } from '../e2e/harness';
import { installCrds } from '../e2e/dry-run';
import { E2E_GOGC, run, Supervisor, waitFor } from '../e2e/processes';
import { E2E } from '../e2e/command';
import { loopbackWebhookArgs, loopbackWebhookConfiguration } from '../e2e/cert-manager';
import { loopbackFlaggerArgs } from '../e2e/flagger';
import { REJUDGE_ANNOTATION, STUCK_GATEWAY_SECONDS, StuckGateways } from '../e2e/envoy-gateway';
import { GATEWAY } from '../src/contract/upstream';
import { ROOT, committedObjects, findObject, runInProcess } from './support';

// Unit tests of the e2e harness's own logic; test/e2e/ runs it on the real engines.

describe('the toolchain pins', () => {
  const script = fs.readFileSync(path.join(ROOT, 'toolchain', 'build.sh'), 'utf8');
  const pinned = (name: string) => new RegExp(`^${name}=(\\S+)`, 'm').exec(script)?.[1];

  it('builds Kubernetes and etcd at the versions its module requires', () => {
    const mod = fs.readFileSync(path.join(ROOT, 'toolchain', 'kubernetes', 'go.mod'), 'utf8');
    expect(mod).toContain(`k8s.io/kubernetes ${pinned('KUBERNETES_VERSION')}`);
    expect(mod).toContain(`go.etcd.io/etcd/server/v3 ${pinned('ETCD_VERSION')}`);
    // The newest supported minor (src/infrastructure/supported-kubernetes.ts).
    expect(pinned('KUBERNETES_VERSION')).toMatch(new RegExp(`^v${supportedKubernetesMinors().at(-1)!.replace('.', '\\.')}\\.\\d+$`));
  });

  it('builds Argo CD at the version its module requires, with its engine at the same release', () => {
    const mod = fs.readFileSync(path.join(ROOT, 'toolchain', 'argocd', 'go.mod'), 'utf8');
    const version = pinned('ARGOCD_VERSION');
    expect(mod).toContain(`github.com/argoproj/argo-cd/v3 ${version}`);
    expect(mod).toContain(`github.com/argoproj/argo-cd/gitops-engine/v3 ${version}`);
  });

  it('runs the Envoy Gateway the platform installs: the control plane and charts at the release table\'s version', () => {
    expect(pinned('ENVOY_GATEWAY_VERSION')).toBe(INFRASTRUCTURE_RELEASES.envoyGateway.chart.version);
    expect(INFRASTRUCTURE_RELEASES.gatewayApiCrds.chart.version).toBe(INFRASTRUCTURE_RELEASES.envoyGateway.chart.version);
  });

  it('builds every component with one Go release, at least the one Argo CD\'s module asks for, and names it in each folder', () => {
    const release = pinned('GO_TOOLCHAIN');
    expect(release).toMatch(/^go\d+\.\d+\.\d+$/);
    // Set once for every build: no build picks another release.
    expect(script.match(/GOTOOLCHAIN=/g)).toEqual(['GOTOOLCHAIN=']);
    expect(script).toMatch(/^export CGO_ENABLED=0 .*GOTOOLCHAIN="\$GO_TOOLCHAIN"$/m);
    const goLine = (file: string) => /^go (\d+)\.(\d+)/m.exec(fs.readFileSync(path.join(ROOT, 'toolchain', file, 'go.mod'), 'utf8'))!.slice(1).map(Number);
    const [major, minor] = release!.slice(2).split('.').map(Number);
    for (const file of ['argocd', 'kubernetes', 'prometheus', 'cert-manager']) {
      const [needsMajor, needsMinor] = goLine(file);
      expect(major! > needsMajor! || (major === needsMajor && minor! >= needsMinor!), file).toBe(true);
    }
    const printed = spawnSync('bash', [path.join(ROOT, 'toolchain', 'build.sh'), '--print'], { encoding: 'utf8' }).stdout.trim().split('\n');
    expect(printed.length).toBeGreaterThan(1);
    for (const line of printed) {
      const [component, version, folder] = line.split(' ');
      expect(path.basename(folder!)).toMatch(new RegExp(`^${component}-${version!.replace(/\./g, '\\.')}-${release!.replace(/\./g, '\\.')}(-|$)`));
    }
  });

  it('runs the cert-manager the platform installs: its controllers, chart and CRDs at the release table\'s version', () => {
    const mod = fs.readFileSync(path.join(ROOT, 'toolchain', 'cert-manager', 'go.mod'), 'utf8');
    expect(pinned('CERT_MANAGER_VERSION')).toBe(INFRASTRUCTURE_RELEASES.certManager.chart.version);
    expect(mod).toContain(`github.com/cert-manager/cert-manager ${pinned('CERT_MANAGER_VERSION')}`);
    // The controllers' default ACME solver image is the release's own: the build sets the release.
    const main = fs.readFileSync(path.join(ROOT, 'toolchain', 'cert-manager', 'controller', 'main.go'), 'utf8');
    expect(main).toContain('var defaultSolverImage = "quay.io/jetstack/cert-manager-acmesolver:" + release');
    expect(script).toContain('-X main.release=$CERT_MANAGER_VERSION');
  });

  it('runs the Flagger the platform installs: its controller, chart and load tester at the release table\'s version', () => {
    expect(pinned('FLAGGER_VERSION')).toBe(`v${INFRASTRUCTURE_RELEASES.flagger.chart.version}`);
    expect(script).toMatch(/^flagger_loadtester_build\(\) \{ go_install "github\.com\/fluxcd\/flagger\/cmd\/loadtester@\$FLAGGER_VERSION"; \}$/m);
  });

  it('runs the prometheus-operator kube-prometheus-stack runs, as the support matrix names it', () => {
    const row = COMPONENT_SUPPORT.find((c) => c.component === 'kube-prometheus-stack')!;
    expect(row.pinned).toBe(`${INFRASTRUCTURE_RELEASES.kubePrometheusStack.chart.version} (prometheus-operator ${pinned('PROMETHEUS_OPERATOR_VERSION')})`);
  });

  it('builds promtool at the version its module requires', () => {
    const mod = fs.readFileSync(path.join(ROOT, 'toolchain', 'prometheus', 'go.mod'), 'utf8');
    expect(mod).toContain(`github.com/prometheus/prometheus ${pinned('PROMETHEUS_VERSION')}`);
  });

  it('tests the sops the platform runs: the plugin image is the version the toolchain builds', () => {
    expect(IMAGES.sops).toBe(`ghcr.io/getsops/sops:${pinned('SOPS_VERSION')}-alpine`);
  });

  it("judges NetworkPolicies with cyclonus's engine at the version its module requires", () => {
    const mod = fs.readFileSync(path.join(ROOT, 'toolchain', 'network-policy', 'go.mod'), 'utf8');
    expect(mod).toContain(`github.com/mattfenwick/cyclonus ${pinned('NETWORK_POLICY_VERSION')}`);
  });

  it('pins every go-installed tool to an exact version', () => {
    for (const name of ['KWOK_VERSION', 'KUSTOMIZE_VERSION', 'HELM_VERSION', 'SOPS_VERSION', 'AGE_VERSION', 'KUBECONFORM_VERSION', 'ENVOY_GATEWAY_VERSION', 'CERT_MANAGER_VERSION', 'FLAGGER_VERSION', 'PROMETHEUS_OPERATOR_VERSION']) {
      expect(pinned(name), name).toMatch(/^v\d+\.\d+\.\d+$/);
    }
  });
});

describe('stand-in charts', () => {
  it('stand in for every upstream chart the platform installs, with CRDs the project keeps', () => {
    for (const { chart } of HELM_RELEASE_ROWS) {
      const standIn = STAND_INS[chart.chart];
      expect(standIn, chart.chart).toBeDefined();
      for (const file of standIn!.crds) expect(fs.existsSync(path.join(ROOT, 'schemas', 'crds', file)), file).toBe(true);
    }
  });
});

describe('the kubelet checks before a container starts', () => {
  it('need every Secret and ConfigMap that env, envFrom, volumes and image pulls name, unless optional', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        imagePullSecrets: [{ name: 'pull' }],
        initContainers: [{ name: 'i', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'init', key: 'a' } } }] }],
        containers: [
          {
            name: 'c',
            env: [
              { name: 'B', valueFrom: { configMapKeyRef: { name: 'cm', key: 'b' } } },
              { name: 'C', valueFrom: { secretKeyRef: { name: 'maybe', key: 'c', optional: true } } },
            ],
            envFrom: [{ secretRef: { name: 'all' } }],
          },
        ],
        volumes: [{ name: 'v', secret: { secretName: 'vol', items: [{ key: 'k', path: 'k' }] } }, { name: 'p', projected: { sources: [{ configMap: { name: 'proj' } }] } }],
      },
    };
    expect(podReferences(pod)).toEqual([
      { kind: 'Secret', name: 'init', key: 'a' },
      { kind: 'ConfigMap', name: 'cm', key: 'b' },
      { kind: 'Secret', name: 'all' },
      { kind: 'Secret', name: 'vol' },
      { kind: 'Secret', name: 'vol', key: 'k' },
      { kind: 'ConfigMap', name: 'proj' },
      { kind: 'Secret', name: 'pull' },
    ]);
  });
});

describe('a stand-in controller\'s write the API server refuses', () => {
  // A client whose list answers one scheduled Pending pod and whose every write is refused
  // the way the API server refuses an invalid object (422 Unprocessable Entity).
  const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'webapp-1', namespace: 'webapp' }, spec: { nodeName: 'e2e-node-a', containers: [] }, status: { phase: 'Pending' } };
  const refusing = (status: number) =>
    ({
      list: async (apiVersion: string, kind: string) => (kind === 'Pod' ? [pod] : []),
      get: async () => undefined,
      mergePatch: async () => {
        throw new ApiError(status, status === 422 ? 'Invalid' : 'Conflict', `PATCH /api/v1/namespaces/webapp/pods/webapp-1: ${status} refused`);
      },
      create: async () => undefined,
    }) as unknown as KubeClient;

  it('is reported at once, naming the object and the server\'s answer, not retried until a timeout', async () => {
    const controllers = new StandInControllers(refusing(422));
    await controllers.reconcile();
    expect(() => controllers.assertNoRefusal()).toThrow(/refused 1 write\(s\) of the stand-in controllers: Pod webapp\/webapp-1: PATCH .*422 refused/);
  });

  it('is retried on the next pass when it is a conflict', async () => {
    const controllers = new StandInControllers(refusing(409));
    await controllers.reconcile();
    expect(() => controllers.assertNoRefusal()).not.toThrow();
  });
});

describe('a real controller the harness runs instead of a chart\'s stand-in', () => {
  // cert-manager's chart, installed by Argo CD: its controller Deployment and that Deployment's
  // pod, scheduled, not started. The pod is admitted only once the real controller runs, so
  // Argo CD finds the release Healthy only when its webhook judges what the next waves apply.
  const deployment: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: STAND_INS['cert-manager']!.controller!, namespace: 'cert-manager' },
    spec: { selector: { matchLabels: { app: 'cert-manager' } } },
  };
  const pod = (labels: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${labels.app}-1`, namespace: 'cert-manager', labels },
    spec: { nodeName: 'e2e-node-a', containers: [] },
    status: { phase: 'Pending' },
  });
  const crd = (established: boolean): KubeObject => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'certificates.cert-manager.io' },
    status: { conditions: [{ type: 'NamesAccepted', status: 'True' }, ...(established ? [{ type: 'Established', status: 'True' }] : [])] },
  });
  const cluster = (pods: KubeObject[], crds: KubeObject[] = [crd(true)]) => {
    const verdicts = new Map<string, string>();
    const client = {
      list: async (_apiVersion: string, kind: string) => (kind === 'Pod' ? pods : kind === 'Deployment' ? [deployment] : kind === 'CustomResourceDefinition' ? crds : []),
      get: async () => undefined,
      mergePatch: async (object: KubeObject, patch: any) => {
        verdicts.set(object.metadata.name, patch.metadata.annotations[KWOK_ADMITTED_ANNOTATION]);
      },
      create: async () => undefined,
    } as unknown as KubeClient;
    return { client, verdicts };
  };

  it('is started once its Deployment exists, and that Deployment\'s pods start only once it runs', async () => {
    const { client, verdicts } = cluster([pod({ app: 'cert-manager' }), pod({ app: 'other' })]);
    const starts: string[] = [];
    const controllers = new StandInControllers(client, { 'cert-manager': async (namespace) => void starts.push(namespace) });
    await controllers.reconcile();
    expect(starts).toEqual(['cert-manager']);
    expect(verdicts.get('cert-manager-1')).toBe('waiting: the real cert-manager controller is not running yet');
    expect(verdicts.get('other-1')).toBe('passed');
    await controllers.reconcile();
    expect(starts).toEqual(['cert-manager']);
    expect(verdicts.get('cert-manager-1')).toBe('passed');
  });

  it('is started only once every CRD is served, as its pod would start well after them', async () => {
    const crds = [crd(false)];
    const { client, verdicts } = cluster([pod({ app: 'cert-manager' })], crds);
    const starts: string[] = [];
    const controllers = new StandInControllers(client, { 'cert-manager': async (namespace) => void starts.push(namespace) });
    await controllers.reconcile();
    await controllers.reconcile();
    expect(starts).toEqual([]);
    expect(verdicts.get('cert-manager-1')).toBe('waiting: the real cert-manager controller is not running yet');
    crds[0] = crd(true);
    await controllers.reconcile();
    await controllers.reconcile();
    expect(starts).toEqual(['cert-manager']);
    expect(verdicts.get('cert-manager-1')).toBe('passed');
  });

  it('keeps those pods waiting when it did not start, and says why', async () => {
    const { client, verdicts } = cluster([pod({ app: 'cert-manager' })]);
    const controllers = new StandInControllers(client, {
      'cert-manager': async () => {
        throw new Error('cert-manager-webhook did not listen');
      },
    });
    await controllers.reconcile();
    await controllers.reconcile();
    expect(verdicts.get('cert-manager-1')).toBe('waiting: the real cert-manager controller is not running yet');
    expect(() => controllers.assertStarted()).toThrow(/a real controller did not start: cert-manager: cert-manager-webhook did not listen/);
  });
});

describe('the convergence report', () => {
  it('counts only Synced and Healthy as converged, and says why an Application is not', () => {
    const app = {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'database' },
      spec: { destination: { namespace: 'database' } },
      status: {
        sync: { status: 'OutOfSync' },
        health: { status: 'Progressing' },
        operationState: { phase: 'Running', message: 'waiting for completion of hook batch/Job/migrate' },
        resources: [{ kind: 'Job', namespace: 'database', name: 'migrate', health: { status: 'Progressing', message: 'Pending' } }],
      },
    };
    const state = applicationState(app, 'database', 2, new Map([['database/migrate-x', 'waiting: Secret db not found']]));
    expect(converged(state)).toBe(false);
    expect(state.message).toContain('sync Running');
    expect(state.message).toContain('Job database/migrate Progressing: Pending');
    expect(state.message).toContain('Pod database/migrate-x not started, waiting: Secret db not found');
    expect(applicationState(undefined, 'broker', 3).sync).toBe('Missing');
  });

  it('counts an Application only an operator syncs as converged when Healthy until the operator\'s sync, then only when Synced too', () => {
    const app = (sync: string) => ({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'argocd', annotations: { 'platform-gitops.io/sync': 'operator' } },
      spec: { destination: { namespace: 'argocd' } },
      status: { sync: { status: sync }, health: { status: 'Healthy' } },
    });
    const waiting = applicationState(app('OutOfSync'), 'argocd', 3);
    expect(waiting.operatorSynced).toBe(true);
    expect(waiting.message).toContain("waits for an operator's sync");
    expect(converged(waiting, true)).toBe(true);
    expect(converged(waiting)).toBe(false);
    expect(converged(applicationState(app('Synced'), 'argocd', 3))).toBe(true);
    // Any other Application is never converged OutOfSync.
    const other = applicationState({ ...app('OutOfSync'), metadata: { name: 'issuers' } }, 'issuers', 2);
    expect(converged(other, true)).toBe(false);
  });
});

describe('the newest warnings of a run that did not converge (e2e/convergence.ts)', () => {
  const event = (kind: string, name: string, type: string, reason: string, message: string, lastTimestamp: string) => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${name}.${lastTimestamp}`, namespace: 'webapp' },
    involvedObject: { kind, name, namespace: 'webapp' },
    type,
    reason,
    message,
    lastTimestamp,
  });
  const selector = 'deployment webapp.webapp spec.selector.matchLabels must contain one of [app name app.kubernetes.io/name]';
  const events = [
    event('Canary', 'webapp', 'Warning', 'Synced', 'an older warning', '2026-11-27T10:00:00Z'),
    event('Canary', 'webapp', 'Warning', 'Synced', selector, '2026-11-27T10:00:10Z'),
    event('Canary', 'webapp', 'Normal', 'Synced', 'New Canary detected', '2026-11-27T10:00:20Z'),
    event('Deployment', 'webapp', 'Warning', 'Unhealthy', 'a warning of a Healthy object', '2026-11-27T10:00:05Z'),
  ];
  const app = {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'webapp' },
    status: {
      resources: [
        { kind: 'Canary', name: 'webapp', namespace: 'webapp', health: { status: 'Unknown', message: 'Initializing' } },
        { kind: 'Deployment', name: 'webapp', namespace: 'webapp', health: { status: 'Healthy' } },
      ],
    },
  };

  it('keeps the newest Warning of each object, not its Normal events', () => {
    expect(latestWarnings(events)).toEqual(new Map([
      ['Canary webapp/webapp', `Synced: ${selector}`],
      ['Deployment webapp/webapp', 'Unhealthy: a warning of a Healthy object'],
    ]));
  });

  it('adds the warning of each resource that is not Healthy to an Application that did not converge', () => {
    const state = { name: 'webapp', wave: 6, sync: 'Synced', health: 'Unknown', message: 'Canary webapp/webapp Unknown: Initializing' };
    expect(withWarnings(state, app, latestWarnings(events)).message).toBe(`Canary webapp/webapp Unknown: Initializing; Canary webapp/webapp warned Synced: ${selector}`);
    const healthy = { ...state, health: 'Healthy', message: '' };
    expect(withWarnings(healthy, app, latestWarnings(events))).toBe(healthy);
  });

  it('finds the resources by the causes Argo CD names in the Application\'s health, since it keeps their own health out of it', () => {
    const unpersisted = { ...app, status: { resources: app.status.resources.map(({ health: _health, ...resource }) => resource), health: { status: 'Unknown', message: 'Caused by flagger.app/Canary:webapp/webapp' } } };
    const state = { name: 'webapp', wave: 6, sync: 'Synced', health: 'Unknown', message: 'health Unknown: Caused by flagger.app/Canary:webapp/webapp' };
    expect(withWarnings(state, unpersisted, latestWarnings(events)).message).toBe(`${state.message}; Canary webapp/webapp warned Synced: ${selector}`);
  });
});

describe("the causes of an Application's health (src/cluster/argo-cd.ts)", () => {
  const app = (message: string) => ({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'x' }, status: { health: { status: 'Degraded', message } } });

  it('reads the group, kind, namespace and name of each cause, core and cluster-scoped kinds included', () => {
    expect(healthCauses(app('Caused by apps/Deployment:cert-manager/cert-manager, apiextensions.k8s.io/CustomResourceDefinition:certificaterequests.cert-manager.io, Service:webapp/webapp and 2 more'))).toEqual([
      'Deployment cert-manager/cert-manager',
      'CustomResourceDefinition certificaterequests.cert-manager.io',
      'Service webapp/webapp',
    ]);
    expect(healthCauses(app('Deployment x failed'))).toEqual([]);
    expect(healthCauses(undefined)).toEqual([]);
  });
});

describe("an Application's last failed sync attempt (e2e/convergence.ts)", () => {
  const billing = (operationState: object, sync = 'OutOfSync', health = 'Missing') => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'billing' },
    spec: { destination: { namespace: 'billing' } },
    status: { sync: { status: sync }, health: { status: health }, operationState },
  });
  const failedAttempt = {
    phase: 'Running',
    retryCount: 1,
    message: 'one or more synchronization tasks completed unsuccessfully. Retrying attempt #1 at 12:00AM.',
    syncResult: { resources: [{ kind: 'Job', namespace: 'billing', name: 'early-hook', hookPhase: 'Failed', message: 'Job has reached the specified deadline' }] },
  };
  const nextAttempt = { phase: 'Running', retryCount: 2, message: 'Retrying operation. Attempt #2' };

  it('keeps why the last attempt failed once the next retry has cleared its results', () => {
    const failures = new LastFailures();
    failures.see(billing(failedAttempt));
    failures.see(billing(nextAttempt));
    const state = failures.explain(applicationState(billing(nextAttempt), 'billing', 5));
    expect(state.message).toContain('sync Running (retry 2): Retrying operation. Attempt #2');
    expect(state.message).toContain('last failed attempt: Job billing/early-hook: Job has reached the specified deadline');
  });

  it('adds nothing the message already shows, nor to a converged Application', () => {
    const failures = new LastFailures();
    failures.see(billing(failedAttempt));
    const showing = applicationState(billing(failedAttempt), 'billing', 5);
    expect(failures.explain(showing)).toEqual(showing);
    const succeeded = billing({ phase: 'Succeeded', message: 'successfully synced', finishedAt: '2026-02-01T00:00:00Z' }, 'Synced', 'Healthy');
    const healthy = applicationState({ ...succeeded, status: { ...succeeded.status, reconciledAt: '2026-02-01T00:00:01Z' } }, 'billing', 5);
    expect(failures.explain(healthy)).toEqual(healthy);
    expect(new LastFailures().explain(applicationState(billing(nextAttempt), 'billing', 5)).message).not.toContain('last failed attempt');
  });
});

describe('the git server', () => {
  it('reads both SSH URL forms the platform accepts', () => {
    expect(parseSshUrl('git@github.com:example/platform-gitops.git')).toEqual({ user: 'git', host: 'github.com', port: 22, path: 'example/platform-gitops.git' });
    expect(parseSshUrl('ssh://git@git.example.com:2222/team/repo.git')).toEqual({ user: 'git', host: 'git.example.com', port: 2222, path: 'team/repo.git' });
  });
});

describe('Argo CD configuration in the e2e cluster', () => {
  it('declares the in-cluster destination uncompressed, as a cluster Secret Argo CD reads (v3.6.1 util/db/cluster.go SecretToCluster)', () => {
    const secret = loopbackClusterSecret('argocd');
    expect(secret.metadata.labels).toEqual({ 'argocd.argoproj.io/secret-type': 'cluster' });
    const data = secret['stringData'] as { name: string; server: string; config: string };
    expect(data.server).toBe(IN_CLUSTER);
    expect(JSON.parse(data.config)).toMatchObject({ disableCompression: true });
  });
});

describe('the environment an e2e run names', () => {
  it('is refused as a usage error (printed with the usage) when it is not an environment, before anything starts', async () => {
    await expect(runE2e({ environment: '../../etc', projectRoot: ROOT, timeoutSeconds: 1, dryRun: false, keep: false, log: () => undefined })).rejects.toThrow(UsageError);
  });
});

describe('a run that settles unconverged ends before its timeout with --settle (e2e/convergence.ts)', () => {
  const state = (name: string, sync: string, health: string, extra: object = {}) => ({ name, wave: 6, sync, health, message: sync === 'Synced' && health === 'Healthy' ? '' : 'health Unknown: Caused by flagger.app/Canary:web/webapp', ...extra });
  const t0 = 1_000_000;

  it('ends once each Application not converged kept its state for the settle time and every other converged, not before', () => {
    const states = [state('billing', 'Synced', 'Healthy'), state('webapp', 'Synced', 'Unknown')];
    const changedAt = new Map([['billing', t0], ['webapp', t0]]);
    expect(settled(states, changedAt, t0 + 59_000, 60)).toBeUndefined();
    expect(settled(states, changedAt, t0 + 60_000, 60)).toBe('settled for 60 s with every other Application converged: webapp Synced Unknown');
  });

  it('waits while any Application not converged still changes, is still missing or has no state seen yet', () => {
    const changedAt = new Map([['billing', t0 + 50_000], ['webapp', t0]]);
    expect(settled([state('billing', 'OutOfSync', 'Progressing'), state('webapp', 'Synced', 'Unknown')], changedAt, t0 + 60_000, 60)).toBeUndefined();
    expect(settled([state('billing', 'Missing', 'Missing'), state('webapp', 'Synced', 'Unknown')], new Map([['billing', t0], ['webapp', t0]]), t0 + 60_000, 60)).toBeUndefined();
    expect(settled([state('webapp', 'Synced', 'Unknown')], new Map(), t0 + 60_000, 60)).toBeUndefined();
  });

  it('never ends a run that converged: that is the run\'s own end', () => {
    expect(settled([state('billing', 'Synced', 'Healthy')], new Map([['billing', t0]]), t0 + 600_000, 60)).toBeUndefined();
  });

  it('counts what only an operator syncs as converged when Healthy before the operator\'s sync, as the run does', () => {
    const states = [state('argocd', 'OutOfSync', 'Healthy', { operatorSynced: true }), state('webapp', 'Synced', 'Unknown')];
    const changedAt = new Map([['argocd', t0], ['webapp', t0]]);
    expect(settled(states, changedAt, t0 + 60_000, 60, true)).toBe('settled for 60 s with every other Application converged: webapp Synced Unknown');
    expect(settled(states, changedAt, t0 + 60_000, 60, false)).toBe('settled for 60 s with every other Application converged: argocd OutOfSync Healthy, webapp Synced Unknown');
  });

  it('is quiet at least as long as an error must stay to be final, so that a settle time shorter than that never hides an error the run would stop for', () => {
    const states = [state('billing', 'OutOfSync', 'Missing', { message: 'SyncError: Failed last sync attempt' }), state('webapp', 'Synced', 'Unknown')];
    const changedAt = new Map([['billing', t0], ['webapp', t0]]);
    expect(settled(states, changedAt, t0 + (FAIL_FAST_SECONDS - 1) * 1000, 20)).toBeUndefined();
    expect(settled(states, changedAt, t0 + FAIL_FAST_SECONDS * 1000, 20)).toBe(`settled for ${FAIL_FAST_SECONDS} s with every other Application converged: billing OutOfSync Missing, webapp Synced Unknown`);
  });

  it('holds the stop for an unmendable Application until every other one converged, stopped or kept its state for the settle time', () => {
    const hook = state('webapp', 'OutOfSync', 'Missing');
    const canary = state('shop', 'Synced', 'Unknown');
    const states = [state('billing', 'Synced', 'Healthy'), hook, canary];
    const ended = new Set(['webapp']);
    expect(stillChanging(states, new Map([['webapp', t0], ['shop', t0 + 10_000]]), t0 + 29_000, 20, ended)).toEqual(['shop']);
    expect(stillChanging(states, new Map([['webapp', t0], ['shop', t0 + 10_000]]), t0 + 30_000, 20, ended)).toEqual([]);
    // Without the unmendable one ended, it is waited on as any other.
    expect(stillChanging(states, new Map([['webapp', t0 + 25_000], ['shop', t0]]), t0 + 30_000, 20, new Set())).toEqual(['webapp']);
    // An Application its stuck parent never created stays Missing: settled once it stayed so.
    expect(stillChanging([hook, state('later', 'Missing', 'Missing')], new Map([['later', t0]]), t0 + 20_000, 20, ended)).toEqual([]);
  });

  it('is a whole number of seconds, at least 1, on the command line (exit 2, before anything starts)', async () => {
    const run = await runInProcess(E2E, ['--env', 'local', '--settle', '0']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--settle "0" must be a whole number of seconds, at least 1');
  });
});

describe('the e2e stops early for what no wave or retry mends (e2e/convergence.ts)', () => {
  const app = (status: object, automated: object | 'manual' = {}): KubeObject => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'webapp', namespace: 'argocd' },
    spec: { syncPolicy: { ...(automated === 'manual' ? {} : { automated }), retry: { limit: 5 } } },
    status,
  });
  /** `unmendable` of the Application in one poll at `seconds` (`lastFailed`: its last failed attempt's results). */
  const at = (clock: ProblemClock, seconds: number, application: KubeObject, lastFailed: readonly string[] = []) => {
    clock.poll(1_000_000 + seconds * 1000);
    return unmendable(application, clock, lastFailed);
  };

  it('stops for a comparison error that stayed FAIL_FAST_SECONDS, not before, and forgets one that went away', () => {
    const clock = new ProblemClock();
    const broken = app({ conditions: [{ type: 'ComparisonError', message: "unable to resolve 'no-such-branch' to a commit SHA" }] });
    expect(at(clock, 0, broken)).toBeUndefined();
    expect(at(clock, FAIL_FAST_SECONDS - 1, broken)).toBeUndefined();
    expect(at(clock, FAIL_FAST_SECONDS, broken)).toBe(`webapp: ComparisonError for ${FAIL_FAST_SECONDS} s: unable to resolve 'no-such-branch' to a commit SHA`);
    const again = new ProblemClock();
    expect(at(again, 0, broken)).toBeUndefined();
    expect(at(again, 10, app({}))).toBeUndefined();
    // Back after a poll without it: its clock starts again.
    expect(at(again, FAIL_FAST_SECONDS + 10, broken)).toBeUndefined();
    expect(at(again, 200, app({ conditions: [{ type: 'SyncError', message: 'x' }] }))).toBeUndefined();
  });

  it('stops for an object the API server refuses as invalid, whatever retry note Argo CD appends to the message', () => {
    const clock = new ProblemClock();
    const invalid = 'CronJob.batch "backup" is invalid: spec.schedule: Invalid value: "0 25 * * *"';
    const reason = `one or more objects failed to apply, reason: ${invalid}`;
    // controller/appcontroller.go: "%s. Retrying attempt #%d at %s." with an RFC 3339 time.
    const refused = (attempt: number) => app({ operationState: { phase: 'Running', retryCount: attempt, message: `${reason}. Retrying attempt #${attempt} at 2026-11-26T10:0${attempt}:00Z.` } });
    expect(at(clock, 0, refused(1))).toBeUndefined();
    expect(at(clock, FAIL_FAST_SECONDS, refused(2))).toBe(`webapp: the API server refused for ${FAIL_FAST_SECONDS} s: ${invalid}`);
    // A validating webhook's denial of the object as written: the same on every retry.
    const denial = 'admission webhook "webhook.cert-manager.io" denied the request: spec.privateKey.size: Invalid value: 1024: must be between 2048 & 8192 for rsa keyAlgorithm';
    const denied = new ProblemClock();
    expect(at(denied, 0, app({ operationState: { phase: 'Running', message: `one or more objects failed to apply, reason: ${denial}` } }))).toBeUndefined();
    expect(at(denied, FAIL_FAST_SECONDS, app({ operationState: { phase: 'Running', message: `one or more objects failed to apply, reason: ${denial}. Retrying attempt #3 at 2026-11-26T10:03:00Z.` } }))).toBe(
      `webapp: the API server refused for ${FAIL_FAST_SECONDS} s: ${denial}`,
    );
    // An unreachable webhook may start later: waited for.
    const unreachable = app({ operationState: { phase: 'Running', message: 'Internal error occurred: failed calling webhook "webhook.cert-manager.io": connection refused' } });
    const later = new ProblemClock();
    at(later, 0, unreachable);
    expect(at(later, 600, unreachable)).toBeUndefined();
    // A missing CRD may come with a later wave: never a reason to stop early.
    const missing = app({ operationState: { phase: 'Running', retryCount: 1, message: 'the server could not find the requested resource. Retrying attempt #1 at 2026-11-26T10:01:00Z.' } });
    const other = new ProblemClock();
    expect(at(other, 0, missing)).toBeUndefined();
    expect(at(other, 600, missing)).toBeUndefined();
  });

  it('counts a refusal through the retries that send the object again, whose running attempt shows no result yet', () => {
    // Argo CD's backoff (10 s, then 20 s, 40 s...) shows the refusal only between attempts.
    const denial = 'admission webhook "webhook.cert-manager.io" denied the request: spec.privateKey.size: Invalid value: 1024: must be between 2048 & 8192 for rsa keyAlgorithm';
    const waiting = (attempt: number) => app({ operationState: { phase: 'Running', retryCount: attempt, message: `one or more synchronization tasks completed unsuccessfully, reason: ${denial}. Retrying attempt #${attempt} at 2026-11-26T10:0${attempt}:00Z.` } });
    const retrying = (attempt: number) => app({ operationState: { phase: 'Running', retryCount: attempt, message: `Retrying operation. Attempt #${attempt}` } });
    const lastFailed = [`Certificate cert-manager/local-ca-root: ${denial}`];
    const clock = new ProblemClock();
    expect(at(clock, 0, waiting(1), lastFailed)).toBeUndefined();
    expect(at(clock, 10, retrying(1), lastFailed)).toBeUndefined();
    expect(at(clock, 12, waiting(2), lastFailed)).toBeUndefined();
    expect(at(clock, FAIL_FAST_SECONDS, retrying(2), lastFailed)).toBe(`webapp: the API server refused for ${FAIL_FAST_SECONDS} s: ${denial}`);
    // The first attempt, not a retry: what an earlier sync failed with does not count.
    const fresh = new ProblemClock();
    const first = app({ operationState: { phase: 'Running', message: 'waiting for completion of hook batch/Job/migrate' } });
    at(fresh, 0, first, lastFailed);
    expect(at(fresh, FAIL_FAST_SECONDS * 2, first, lastFailed)).toBeUndefined();
  });

  it('stops for an automated sync that failed and left the Application OutOfSync; not for one that left it Synced, nor for an operator\'s', () => {
    const failed = (sync: string, automated: object | 'manual') =>
      app({ sync: { status: sync }, operationState: { phase: 'Failed', startedAt: '2026-11-26T10:00:00Z', retryCount: 5, message: 'one or more objects failed to apply (retried 5 times).' } }, automated);
    const clock = new ProblemClock();
    expect(at(clock, 0, failed('OutOfSync', {}))).toBeUndefined();
    expect(at(clock, FAIL_FAST_SECONDS, failed('OutOfSync', {}))).toBe(`webapp: sync Failed, still OutOfSync after ${FAIL_FAST_SECONDS} s: one or more objects failed to apply (retried 5 times).`);
    const synced = new ProblemClock();
    at(synced, 0, failed('Synced', {}));
    expect(at(synced, 100, failed('Synced', {}))).toBeUndefined();
    const operator = new ProblemClock();
    at(operator, 0, failed('OutOfSync', 'manual'));
    expect(at(operator, 100, failed('OutOfSync', 'manual'))).toBeUndefined();
    const paused = new ProblemClock();
    at(paused, 0, failed('OutOfSync', { enabled: false }));
    expect(at(paused, 100, failed('OutOfSync', { enabled: false }))).toBeUndefined();
  });
});

describe('cert-manager\'s webhook on loopback (e2e/cert-manager.ts)', () => {
  const chartArgs = [
    '--v=2',
    '--secure-port=10250',
    '--dynamic-serving-ca-secret-namespace=cert-manager',
    '--dynamic-serving-ca-secret-name=cert-manager-webhook-ca',
    '--dynamic-serving-dns-names=cert-manager-webhook',
    '--dynamic-serving-dns-names=cert-manager-webhook.cert-manager.svc',
  ];

  it('keeps the chart\'s arguments but the serving certificate, the ports and the metrics server', () => {
    expect(loopbackWebhookArgs(chartArgs, { securePort: 40001, healthzPort: 40002, cert: '/run/w.crt', key: '/run/w.key' })).toEqual([
      '--v=2',
      '--secure-port=40001',
      '--healthz-port=40002',
      '--metrics-listen-address=0',
      '--tls-cert-file=/run/w.crt',
      '--tls-private-key-file=/run/w.key',
    ]);
  });

  it('calls the webhook on loopback with the run\'s CA instead of the Service cainjector would fill in, every other field the chart\'s', () => {
    const chart: KubeObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'cert-manager-webhook', labels: { app: 'webhook' }, annotations: { 'cert-manager.io/inject-ca-from-secret': 'cert-manager/cert-manager-webhook-ca' } },
      webhooks: [{ name: 'webhook.cert-manager.io', failurePolicy: 'Fail', rules: [{ apiGroups: ['cert-manager.io'] }], clientConfig: { service: { name: 'cert-manager-webhook', namespace: 'cert-manager', path: '/validate' } } }],
    };
    expect(loopbackWebhookConfiguration(chart, 40001, 'Q0E=')).toEqual({
      ...chart,
      metadata: { name: 'cert-manager-webhook', labels: { app: 'webhook' }, annotations: {} },
      webhooks: [{ name: 'webhook.cert-manager.io', failurePolicy: 'Fail', rules: [{ apiGroups: ['cert-manager.io'] }], clientConfig: { url: 'https://127.0.0.1:40001/validate', caBundle: 'Q0E=' } }],
    });
    const noPath = { ...chart, webhooks: [{ name: 'w', clientConfig: { service: { name: 's', namespace: 'n' } } }] };
    expect(() => loopbackWebhookConfiguration(noPath, 1, 'x')).toThrow(/webhook w calls no Service path/);
  });
});

describe('the cold-build estimate (toolchain/build.sh --estimate)', () => {
  it('lists each recorded build, largest first, with their sum, and names the components without a record', () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-estimate-'));
    try {
      const env = { ...process.env, PLATFORM_GITOPS_CACHE: cache, TOOLCHAIN_LANES: '2' };
      const folders = new Map(
        spawnSync('bash', [path.join(ROOT, 'toolchain', 'build.sh'), '--print'], { env, encoding: 'utf8' })
          .stdout.trim()
          .split('\n')
          .map((line) => line.split(' ') as [string, string, string])
          .map(([component, version, folder]) => [component, { version, folder }]),
      );
      const record = (component: string, seconds: number) => {
        fs.mkdirSync(folders.get(component)!.folder, { recursive: true });
        fs.writeFileSync(path.join(folders.get(component)!.folder, '.build-seconds'), `${seconds}\n`);
      };
      record('kwok', 86);
      record('argocd', 255);
      record('cert-manager', 219);
      const result = spawnSync('bash', [path.join(ROOT, 'toolchain', 'build.sh'), '--estimate'], { env, encoding: 'utf8' });
      expect(result.status).toBe(0);
      const lines = result.stdout.trim().split('\n');
      expect(lines.slice(0, 3).map((line) => line.split(/\s+/))).toEqual([
        ['argocd', folders.get('argocd')!.version, '255', 's'],
        ['cert-manager', folders.get('cert-manager')!.version, '219', 's'],
        ['kwok', folders.get('kwok')!.version, '86', 's'],
      ]);
      expect(lines[3]).toBe('total: 560 s (about 10 min), each build with the Go caches as they were then');
      // Largest first on the lane that frees first: argocd on one, cert-manager then kwok on the other.
      expect(lines[4]).toBe('in 2 lanes (TOOLCHAIN_LANES), largest first: 305 s (about 6 min)');
      expect(lines[5]).toMatch(/^not recorded \(not built, or built before builds recorded their time\): kubernetes prometheus-operator helm /);
      expect(lines[5]).not.toMatch(/\b(argocd|kwok|cert-manager)\b/);
    } finally {
      fs.rmSync(cache, { recursive: true, force: true });
    }
  });
});

describe('the toolchain build\'s lanes (toolchain/build.sh, TOOLCHAIN_LANES)', () => {
  const build = (args: readonly string[], env: Record<string, string>) =>
    spawnSync('bash', [path.join(ROOT, 'toolchain', 'build.sh'), ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });

  it('builds every component it is given, several at once, and names each one that failed', () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-lanes-'));
    try {
      // An empty module cache and no proxy: each build fails at its first download, at once.
      const env = { PLATFORM_GITOPS_CACHE: cache, GOMODCACHE: path.join(cache, 'mod'), GOPROXY: 'off', TOOLCHAIN_LANES: '2' };
      const result = build(['age', 'kubeconform', 'kwok'], env);
      expect(result.status).toBe(1);
      for (const component of ['age', 'kubeconform', 'kwok']) expect(result.stderr).toContain(`${component} `);
      expect(result.stderr).toMatch(/failed: (age|kubeconform|kwok) (age|kubeconform|kwok) (age|kubeconform|kwok) \(their errors are above; every other one is built\)/);
      // Nothing half-built is left: no component folder, no temporary one.
      expect(fs.readdirSync(cache).filter((name) => name !== 'mod')).toEqual([]);
    } finally {
      fs.rmSync(cache, { recursive: true, force: true, maxRetries: 3 });
    }
  });

  it('refuses a lane count that is not a whole number of at least 1, before building anything', () => {
    for (const lanes of ['0', 'two', '-1']) {
      const result = build(['age'], { PLATFORM_GITOPS_CACHE: '/nonexistent/never-used', TOOLCHAIN_LANES: lanes });
      expect(result.status, lanes).toBe(2);
      expect(result.stderr).toBe(`toolchain/build.sh: TOOLCHAIN_LANES must be a whole number of at least 1, not '${lanes}'\n`);
    }
  });
});

describe('the sops plugin played as its rendered sidecar (e2e/argocd.ts, e2e/sidecar.ts)', () => {
  // This machine's folders: the sidecar's own (/home/argocd/..., /var/run/argocd) are not here.
  const folders = new Set(['/', '/home', '/tmp', '/var', '/var/run', '/usr', '/usr/local', '/usr/local/bin']);
  const exists = (folder: string) => folders.has(folder);
  const disk = (keys: string[] = [SOPS_AGE.secretKey], secrets = true) => ({
    secrets: new Map(secrets ? [[SOPS_AGE.secretName, { folder: '/run/e2e/age/sops-age', keys }]] : []),
    configMaps: new Map([['argocd-cmp-cm', { folder: '/run/e2e/argocd-cmp-cm', keys: [`${SOPS_PLUGIN.name}.yaml`] }]]),
    sockets: '/run/e2e/plugins',
    varFiles: '/run/e2e/var-files',
  });

  // The repository server's Deployment of local's kustomization, as kustomize builds it.
  const repoServer = () => builtObject(builtArgoCd('local'), 'Deployment', 'argocd-repo-server');

  it('runs the sidecar\'s command as its user, read-only, with only its environment and its mounts', () => {
    const play = sidecarPlay(SOPS_PLUGIN.name, repoServer(), disk(), '/run/e2e/sops', exists);
    expect(play.command).toEqual(['/var/run/argocd/argocd-cmp-server']);
    expect(play).toMatchObject({ user: 999, group: 0, readOnlyRoot: true, noNewPrivileges: true, dropAllCapabilities: true });
    expect(play.env).toEqual({ PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/', [SOPS_AGE.keyFileVariable]: `${SOPS_AGE.mountPath}/${SOPS_AGE.secretKey}` });
    expect(play.mounts).toEqual([
      // The image's own folders, which this machine does not have, stand on a tmpfs each.
      { kind: 'shadow', target: '/home' },
      { kind: 'shadow', target: '/usr/local/bin' },
      { kind: 'shadow', target: '/var/run' },
      { kind: 'bind', source: '/run/e2e/var-files', target: '/var/run/argocd', file: false, readOnly: false },
      { kind: 'bind', source: '/run/e2e/plugins', target: '/home/argocd/cmp-server/plugins', file: false, readOnly: false },
      // A ConfigMap's key: read-only, though the chart's mount does not say so (the kubelet's rule).
      { kind: 'bind', source: `/run/e2e/argocd-cmp-cm/${SOPS_PLUGIN.name}.yaml`, target: '/home/argocd/cmp-server/config/plugin.yaml', file: true, readOnly: true },
      { kind: 'bind', source: '/run/e2e/age/sops-age', target: SOPS_AGE.mountPath, file: false, readOnly: true },
      { kind: 'bind', source: '/run/e2e/sops', target: '/usr/local/bin/sops', file: true, readOnly: true },
      { kind: 'emptyDir', target: '/tmp' },
    ]);
  });

  it('writes a script that mounts, makes the root read-only, then drops to the user with nothing else', () => {
    const script = containerScript(sidecarPlay(SOPS_PLUGIN.name, repoServer(), disk(), "/run/e2e/it's/sops", exists)).trimEnd().split('\n');
    expect(script[0]).toBe('set -eu');
    expect(script).toContain("mount --bind '/run/e2e/it'\\''s/sops' '/usr/local/bin/sops'");
    expect(script).toContain(`mount -o remount,bind,ro '${SOPS_AGE.mountPath}'`);
    expect(script.at(-3)).toBe('mount -o remount,bind,ro /');
    // Then every other file system, but the kernel's and the sidecar's writable mounts (its
    // emptyDirs; the key and plugin.yaml are a Secret's and a ConfigMap's, read-only).
    expect(script.at(-2)).toBe(
      "findmnt -lno TARGET | while IFS= read -r target; do case $target in /|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*|'/var/run/argocd'|'/home/argocd/cmp-server/plugins'|'/tmp') ;; *) mount -o remount,bind,ro \"$target\" ;; esac; done",
    );
    expect(script).toContain('mount -t tmpfs -o mode=1777,size=64m tmpfs /dev/shm');
    expect(script.at(-1)).toBe(
      `exec setpriv --reuid=999 --regid=0 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs env -i 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' 'HOME=/' '${SOPS_AGE.keyFileVariable}=${SOPS_AGE.mountPath}/${SOPS_AGE.secretKey}' '/var/run/argocd/argocd-cmp-server'`,
    );
    // Every bind before the emptyDir over /tmp, where the run keeps the sources.
    expect(script.findIndex((line) => line.startsWith('mount -t tmpfs -o mode=1777'))).toBeGreaterThan(script.findLastIndex((line) => line.startsWith('mount --bind')));
  });

  it('kills a step that runs past its time with every process it started, and says so without its environment (as root)', async () => {
    const marker = '31.4159';
    const play = { command: ['sh', '-c', `echo started; sleep ${marker} & sleep ${marker}`], env: { PATH: '/usr/bin:/bin', PASSWORD: 'never-printed' }, user: 65534, group: 65534, readOnlyRoot: true, noNewPrivileges: true, dropAllCapabilities: true, mounts: [] };
    const result = await runContainer(play, 1500);
    expect(result).toEqual({ exitCode: 1, output: 'started\n(killed: it ran past 1500 ms)' });
    expect(spawnSync('pgrep', ['-f', `sleep ${marker}`]).status).toBe(1);
  });

  it('refuses a variable naming a key the mounted Secret does not hold, a Secret the bootstrap does not create, and a plugin without a sidecar', () => {
    expect(() => sidecarPlay(SOPS_PLUGIN.name, repoServer(), disk(['age.agekey']), '/s', exists)).toThrow(
      `container ${SOPS_PLUGIN.name}: ${SOPS_AGE.keyFileVariable}=${SOPS_AGE.mountPath}/${SOPS_AGE.secretKey} names key ${SOPS_AGE.secretKey} of Secret ${SOPS_AGE.secretName}, which holds age.agekey`,
    );
    expect(() => sidecarPlay(SOPS_PLUGIN.name, repoServer(), disk([], false), '/s', exists)).toThrow(`sidecar ${SOPS_PLUGIN.name} mounts Secret ${SOPS_AGE.secretName}, which the bootstrap does not create`);
    expect(() => sidecarPlay('no-such-plugin', repoServer(), disk(), '/s', exists)).toThrow(/argocd-repo-server Deployment has no sidecar named no-such-plugin/);
  });

  it('refuses a mount it would have to stand in for under / itself, and a source the stand-in folders would hide', () => {
    expect(() => sidecarPlay(SOPS_PLUGIN.name, repoServer(), disk(), '/s', (folder) => folder === '/' || folder === '/tmp')).toThrow(/needs a folder this machine does not have directly under \//);
    expect(() => sidecarPlay(SOPS_PLUGIN.name, repoServer(), { ...disk(), sockets: '/home/e2e/plugins' }, '/s', exists)).toThrow(
      'container sops: the source of its mount at /home/argocd/cmp-server/plugins, /home/e2e/plugins, lies under /home, which the harness hides to stand in for the image\'s own folder',
    );
  });
});

describe("Flagger's controller on loopback (e2e/flagger.ts)", () => {
  const chartArgs = ['-log-level=info', '-mesh-provider=gatewayapi:v1', '-metrics-server=http://kube-prometheus-stack-prometheus.monitoring:9090', '-enable-config-tracking=true', '-slack-user=flagger'];

  it("keeps every argument of the chart's and adds the run's kubeconfig and a free port", () => {
    expect(loopbackFlaggerArgs(chartArgs, '/run/kubeconfig', 40003)).toEqual([...chartArgs, '-kubeconfig=/run/kubeconfig', '-port=40003']);
  });

  it('refuses a chart that sets what the loopback process must set itself, rather than passing both', () => {
    expect(() => loopbackFlaggerArgs([...chartArgs, '-port=8080'], '/k', 1)).toThrow(/chart now renders -port/);
    expect(() => loopbackFlaggerArgs([...chartArgs, '-kubeconfig', '/x'], '/k', 1)).toThrow(/chart now renders -kubeconfig/);
  });
});

/** An API server over TLS on loopback answering with `handle`, and a KubeClient of it as the administrator. */
async function tlsApiServer(name: string, handle: http.RequestListener): Promise<{ client: KubeClient; server: https.Server; close: () => Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `platform-gitops-${name}-`));
  const pki = new Pki(dir);
  const ca = pki.ca('ca', `/CN=${name}-ca`);
  const serving = pki.leaf('server', ca, '/CN=127.0.0.1', 'server', [], ['127.0.0.1']);
  const admin = pki.leaf('admin', ca, '/CN=admin', 'client');
  const server = https.createServer({ cert: fs.readFileSync(serving.cert), key: fs.readFileSync(serving.key) }, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = new KubeClient(`https://127.0.0.1:${port}`, { ca: ca.cert, cert: admin.cert, key: admin.key });
  return {
    client,
    server,
    close: async () => {
      client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe("the report's reads of what a converged run synced (KubeClient.listSynced)", () => {
  /**
   * An API server that serves Certificates over TLS, but whose first `misses` answers of
   * discovery say the group version is not there (as one can on a loaded machine).
   */
  async function flakyServer(misses: number): Promise<{ client: KubeClient; discoveries: () => number; close: () => Promise<void> }> {
    let discoveries = 0;
    const { client, close } = await tlsApiServer('list-synced', (request, response) => {
      response.setHeader('Content-Type', 'application/json');
      if (request.url === '/apis/cert-manager.io/v1') {
        discoveries += 1;
        if (discoveries <= misses) {
          response.statusCode = 404;
          response.end(JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 }));
          return;
        }
        response.end(JSON.stringify({ kind: 'APIResourceList', groupVersion: 'cert-manager.io/v1', resources: [{ name: 'certificates', kind: 'Certificate', namespaced: true, verbs: ['list'] }] }));
        return;
      }
      if (request.url?.startsWith('/apis/cert-manager.io/v1/certificates')) {
        response.end(JSON.stringify({ kind: 'CertificateList', items: [{ metadata: { name: 'webapp', namespace: 'webapp' } }] }));
        return;
      }
      response.statusCode = 404;
      response.end('{}');
    });
    return { client, discoveries: () => discoveries, close };
  }

  it('asks again until the Certificates a converged run synced are listed', async () => {
    const server = await flakyServer(2);
    try {
      const listed = await server.client.listSynced('cert-manager.io/v1', 'Certificate', 1, 10);
      expect(listed.map((c) => `${c.metadata.namespace}/${c.metadata.name}`)).toEqual(['webapp/webapp']);
      expect(server.discoveries()).toBe(3);
    } finally {
      await server.close();
    }
  });

  it('reads once, none on a miss, where the run synced none; names the kind when they never come', async () => {
    const once = await flakyServer(1);
    try {
      expect(await once.client.listSynced('cert-manager.io/v1', 'Certificate', 0)).toEqual([]);
      expect(once.discoveries()).toBe(1);
    } finally {
      await once.close();
    }
    const never = await flakyServer(Number.MAX_SAFE_INTEGER);
    try {
      await expect(never.client.listSynced('cert-manager.io/v1', 'Certificate', 1, 1)).rejects.toThrow(/timed out after 1 s waiting for the 1 synced Certificate objects to be listed/);
    } finally {
      await never.close();
    }
  });
});

describe('kinds kept from a watch (KubeClient.watchKinds, changed)', () => {
  /** An API server over TLS that serves ConfigMaps: LISTs counted, and a watch the test sends events on. */
  async function watchingServer(): Promise<{
    client: KubeClient;
    lists: () => number;
    send: (type: string, object: object) => void;
    endWatch: () => void;
    watchCount: () => number;
    /** Answer no new watch (its headers held) until called with false. */
    holdWatches: (hold: boolean) => void;
    closedByClient: (index: number) => Promise<void>;
    refuseWatches: (refuse: boolean) => void;
    watching: Promise<void>;
    close: () => Promise<void>;
  }> {
    let lists = 0;
    let refuseWatches = false;
    let holdWatches = false;
    const held: http.ServerResponse[] = [];
    const watches: http.ServerResponse[] = [];
    let watchStarted!: () => void;
    const watching = new Promise<void>((resolve) => (watchStarted = resolve));
    const { client, close } = await tlsApiServer('watched', (request, response) => {
      response.setHeader('Content-Type', 'application/json');
      const url = new URL(request.url ?? '/', 'https://127.0.0.1');
      if (url.pathname === '/api/v1') {
        response.end(JSON.stringify({ kind: 'APIResourceList', groupVersion: 'v1', resources: [{ name: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: ['list', 'watch'] }] }));
      } else if (url.pathname === '/api/v1/configmaps' && url.searchParams.get('watch') === 'true') {
        if (refuseWatches) {
          response.statusCode = 503;
          response.end('{}');
          return;
        }
        watches.push(response);
        if (holdWatches) held.push(response);
        else response.flushHeaders();
        watchStarted();
      } else if (request.method === 'PATCH' && url.pathname === '/api/v1/namespaces/app/configmaps/first') {
        response.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first', namespace: 'app', resourceVersion: '10' }, data: { written: 'yes' } }));
      } else if (url.pathname === '/api/v1/configmaps' || url.pathname === '/api/v1/namespaces/app/configmaps') {
        lists += 1;
        response.end(JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'first', namespace: 'app', resourceVersion: '7' } }] }));
      } else {
        response.statusCode = 404;
        response.end('{}');
      }
    });
    return {
      client,
      lists: () => lists,
      send: (type, object) => watches.at(-1)!.write(`${JSON.stringify({ type, object })}\n`),
      endWatch: () => watches.at(-1)!.end(),
      watchCount: () => watches.length,
      holdWatches: (hold) => {
        holdWatches = hold;
        if (!hold) for (const response of held.splice(0)) response.flushHeaders();
      },
      closedByClient: (index) => new Promise<void>((resolve) => (watches[index]!.closed ? resolve() : watches[index]!.on('close', () => resolve()))),
      refuseWatches: (refuse) => (refuseWatches = refuse),
      watching,
      close: async () => {
        client.close();
        for (const response of watches) response.end();
        await close();
      },
    };
  }

  const names = (objects: readonly KubeObject[]) => objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

  /** Run `test` against a new watching server, closed after it whatever happens. */
  async function withWatchingServer(test: (server: Awaited<ReturnType<typeof watchingServer>>) => Promise<void>): Promise<void> {
    const server = await watchingServer();
    try {
      await test(server);
    } finally {
      await server.close();
    }
  }

  /** Watch ConfigMaps from the client's first list on, and wait until the watch is open. */
  async function watchConfigMaps(server: { client: KubeClient; watching: Promise<void> }): Promise<void> {
    server.client.watchKinds(['v1/ConfigMap']);
    await server.client.list('v1', 'ConfigMap');
    await server.watching;
  }

  it('lists once, then answers from the watch, each change included, without asking the server again', async () => {
    await withWatchingServer(async (server) => {
    server.client.watchKinds(['v1/ConfigMap']);
    expect(names(await server.client.list('v1', 'ConfigMap'))).toEqual(['app/first']);
    await server.watching;
    const lists = server.lists();
    const change = server.client.changed(10_000);
    server.send('ADDED', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'second', namespace: 'other', resourceVersion: '8' } });
    await change;
    expect(names(await server.client.list('v1', 'ConfigMap'))).toEqual(['app/first', 'other/second']);
    expect(names(await server.client.list('v1', 'ConfigMap', 'other'))).toEqual(['other/second']);
    server.send('DELETED', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first', namespace: 'app', resourceVersion: '9' } });
    await server.client.changed(10_000);
    const listed = await server.client.list('v1', 'ConfigMap');
    expect(names(listed)).toEqual(['other/second']);
    expect(listed[0]).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(server.lists()).toBe(lists);
    });
  });

  it("reads its own writes: asks the server until the watch has seen what this client wrote", async () => {
    await withWatchingServer(async (server) => {
    await watchConfigMaps(server);
    await server.client.list('v1', 'ConfigMap');
    const before = server.lists();
    await server.client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first', namespace: 'app' }, data: { written: 'yes' } });
    // The watch has not sent the write yet: the server is asked.
    await server.client.list('v1', 'ConfigMap');
    expect(server.lists()).toBe(before + 1);
    const change = server.client.changed(10_000);
    server.send('MODIFIED', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first', namespace: 'app', resourceVersion: '10' }, data: { written: 'yes' } });
    await change;
    const listed = await server.client.list('v1', 'ConfigMap');
    expect(listed[0]?.data).toEqual({ written: 'yes' });
    expect(server.lists()).toBe(before + 1);
    });
  });

  it('lists as before while its watch fails, and answers from a new watch once one has listed again', async () => {
    await withWatchingServer(async (server) => {
    await watchConfigMaps(server);
    // The client's own list, and the watch's.
    expect(server.lists()).toBe(2);
    await server.client.list('v1', 'ConfigMap');
    expect(server.lists()).toBe(2);
    // The watch ends and the API server refuses the next one: the kept objects are not used.
    server.refuseWatches(true);
    server.endWatch();
    await waitFor('the failed watch to be seen', 5_000, async () => {
      await server.client.list('v1', 'ConfigMap');
      return server.lists() > 2 ? true : undefined;
    });
    // Watches are served again: a new one lists, then the client answers from it.
    server.refuseWatches(false);
    await waitFor('a new watch', 10_000, async () => {
      const before = server.lists();
      await server.client.list('v1', 'ConfigMap');
      return server.lists() === before ? true : undefined;
    });
    const settled = server.lists();
    expect(names(await server.client.list('v1', 'ConfigMap'))).toEqual(['app/first']);
    expect(server.lists()).toBe(settled);
    });
  });

  it('ends a watch that opens after it was closed (its request on its way when the client closed)', async () => {
    await withWatchingServer(async (server) => {
    await watchConfigMaps(server);
    // The server ends the watch and holds the answer to the one the client asks next; the
    // client is closed meanwhile, then the watch opens.
    server.holdWatches(true);
    server.endWatch();
    await waitFor('the watch asked again', 5_000, () => (server.watchCount() === 2 ? true : undefined));
    server.client.close();
    server.holdWatches(false);
    await server.closedByClient(1);
    });
  });

  it('lists as before a kind it was not asked to watch, and wakes only for the kinds a wait names', async () => {
    await withWatchingServer(async (server) => {
    await server.client.list('v1', 'ConfigMap');
    await server.client.list('v1', 'ConfigMap', 'app');
    expect(server.lists()).toBe(2);
    await watchConfigMaps(server);
    let other = false;
    void server.client.changed(60_000, ['v1/Secret']).then(() => (other = true));
    const started = Date.now();
    const change = server.client.changed(10_000, ['v1/ConfigMap']);
    server.send('MODIFIED', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first', namespace: 'app', resourceVersion: '8' } });
    await change;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(other).toBe(false);
    // With no change, a wait ends at its bound.
    const quiet = Date.now();
    await server.client.changed(300, ['v1/ConfigMap']);
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(290);
    });
  });
});

describe('a refresh asked of a Synced, Progressing Application, or of one whose sync waits on a hook that ended (e2e/convergence.ts)', () => {
  const reconciledAt = Date.parse('2026-11-27T13:36:28Z');
  const app = (status: object = {}, annotations?: Record<string, string>): KubeObject => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'gateway-crds', namespace: 'argocd', ...(annotations === undefined ? {} : { annotations }) },
    status: {
      sync: { status: 'Synced' },
      health: { status: 'Progressing', message: 'Caused by apiextensions.k8s.io/CustomResourceDefinition:backends.gateway.envoyproxy.io' },
      reconciledAt: '2026-11-27T13:36:28Z',
      ...status,
    },
  });
  const after = (seconds: number) => reconciledAt + seconds * 1000;

  it(`awaits one when Synced, Progressing, no operation running and last reconciled ${REFRESH_AFTER_SECONDS} s ago or more`, () => {
    expect(awaitsRefresh(app(), after(REFRESH_AFTER_SECONDS))).toBe(true);
    expect(awaitsRefresh(app(), after(REFRESH_AFTER_SECONDS - 1))).toBe(false);
    expect(awaitsRefresh(app({ sync: { status: 'OutOfSync' } }), after(60))).toBe(false);
    expect(awaitsRefresh(app({ health: { status: 'Healthy' } }), after(60))).toBe(false);
    expect(awaitsRefresh(app({ health: { status: 'Degraded' } }), after(60))).toBe(false);
    expect(awaitsRefresh(app({ operationState: { phase: 'Running' } }), after(60))).toBe(false);
    expect(awaitsRefresh(app({}, { 'argocd.argoproj.io/refresh': 'normal' }), after(60))).toBe(false);
    expect(awaitsRefresh(app({ reconciledAt: undefined }), after(60))).toBe(false);
  });

  it('asks once per reconciliation, with the annotation argocd app get --refresh sets', async () => {
    const patches: unknown[] = [];
    const client = { mergePatch: async (object: KubeObject, patch: unknown) => void patches.push([object.metadata.name, patch]) } as unknown as KubeClient;
    const refresher = new ProgressingRefresher(client);
    await refresher.poll([app()], after(1));
    expect(patches).toEqual([]);
    await refresher.poll([app()], after(REFRESH_AFTER_SECONDS));
    await refresher.poll([app()], after(REFRESH_AFTER_SECONDS + 2));
    expect(patches).toEqual([['gateway-crds', { metadata: { annotations: { 'argocd.argoproj.io/refresh': 'normal' } } }]]);
    await refresher.poll([app({ reconciledAt: '2026-11-27T13:36:40Z' })], after(30));
    expect(patches).toHaveLength(2);
  });

  it('asks once, per operation, when a hook Job the running sync waits on has ended', async () => {
    const hook = (hookPhase: string) => ({ group: 'batch', version: 'v1', kind: 'Job', namespace: 'webapp', name: 'webapp-migrations', hookType: 'Sync', hookPhase });
    const running = (startedAt: string, hookPhase = 'Running') => ({
      ...app({ sync: { status: 'OutOfSync' }, operationState: { phase: 'Running', startedAt, syncResult: { resources: [hook(hookPhase)] } } }),
      metadata: { name: 'webapp', namespace: 'argocd', annotations: {} },
    });
    expect(runningHookJobs(running('2026-11-28T05:50:43Z'))).toEqual(['webapp/webapp-migrations']);
    expect(runningHookJobs(running('2026-11-28T05:50:43Z', 'Succeeded'))).toEqual([]);
    let job: KubeObject | undefined = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'webapp-migrations', namespace: 'webapp' }, status: { active: 1 } };
    const patches: unknown[] = [];
    const client = {
      get: async (_apiVersion: string, _kind: string, name: string, namespace: string) => (job?.metadata.name === name && job.metadata.namespace === namespace ? job : undefined),
      mergePatch: async (object: KubeObject, patch: unknown) => void patches.push([object.metadata.name, patch]),
    } as unknown as KubeClient;
    const refresher = new ProgressingRefresher(client);
    await refresher.poll([running('2026-11-28T05:50:43Z')], after(1));
    expect(patches).toEqual([]);
    job = { ...job!, status: { succeeded: 1, conditions: [{ type: 'SuccessCriteriaMet', status: 'True' }, { type: 'Complete', status: 'True' }] } };
    await refresher.poll([running('2026-11-28T05:50:43Z')], after(2));
    await refresher.poll([running('2026-11-28T05:50:43Z')], after(3));
    expect(patches).toEqual([['webapp', { metadata: { annotations: { 'argocd.argoproj.io/refresh': 'normal' } } }]]);
    // The next sync makes the hook again under its name.
    await refresher.poll([running('2026-11-28T06:10:00Z')], after(4));
    expect(patches).toHaveLength(2);
    expect(jobEnded({ ...job, status: { conditions: [{ type: 'Failed', status: 'True' }] } })).toBe(true);
    expect(jobEnded({ ...job, status: { conditions: [{ type: 'Complete', status: 'False' }] } })).toBe(false);
  });

  it('leaves a refresh that fails to the periodic one, without failing the watch', async () => {
    const client = { mergePatch: async () => Promise.reject(new Error('PATCH argocd/Application/gateway-crds: 404 not found')) } as unknown as KubeClient;
    await expect(new ProgressingRefresher(client).poll([app()], after(REFRESH_AFTER_SECONDS))).resolves.toBeUndefined();
  });
});

describe('a Gateway Envoy Gateway left unprogrammed with its Envoy Service and Deployment ready (e2e/envoy-gateway.ts)', () => {
  const since = '2026-11-27T13:52:31Z';
  const at = (seconds: number) => Date.parse(since) + seconds * 1000;
  const owning = (name: string) => ({ [GATEWAY.owningGatewayNameLabel]: name, [GATEWAY.owningGatewayNamespaceLabel]: name });
  const gateway = (name: string, programmed: object): KubeObject => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace: name },
    status: { conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', lastTransitionTime: since }, { type: 'Programmed', lastTransitionTime: since, ...programmed }] },
  });
  const service = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: `${name}-gateway`, namespace: 'envoy-gateway-system', labels: owning(name) } });
  const deployment = (name: string, available: boolean): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `${name}-gateway`, namespace: 'envoy-gateway-system', labels: owning(name), generation: 1 },
    spec: { replicas: 1 },
    status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: available ? 1 : 0, availableReplicas: available ? 1 : 0, conditions: [{ type: 'Available', status: available ? 'True' : 'False' }] },
  });
  function cluster(objects: Record<string, KubeObject[]>) {
    const patches: [string, unknown][] = [];
    const client = {
      list: async (_apiVersion: string, kind: string) => objects[kind] ?? [],
      mergePatch: async (object: KubeObject, patch: unknown) => void patches.push([`${object.kind} ${object.metadata.namespace}/${object.metadata.name}`, patch]),
    } as unknown as KubeClient;
    const lines: string[] = [];
    return { stuck: new StuckGateways(client, 'envoy-gateway-system', (line) => lines.push(line)), patches, lines };
  }

  it(`annotates the Envoy Service of a Gateway left AddressNotAssigned ${STUCK_GATEWAY_SECONDS} s with its Service and Deployment ready, once per condition`, async () => {
    const { stuck, patches, lines } = cluster({
      Gateway: [gateway('webapp', { status: 'False', reason: 'AddressNotAssigned' }), gateway('billing', { status: 'True', reason: 'Programmed' })],
      Service: [service('webapp'), service('billing')],
      Deployment: [deployment('webapp', true), deployment('billing', true)],
    });
    await stuck.poll(at(STUCK_GATEWAY_SECONDS - 1));
    expect(patches).toEqual([]);
    await stuck.poll(at(STUCK_GATEWAY_SECONDS));
    await stuck.poll(at(STUCK_GATEWAY_SECONDS + 5));
    expect(patches).toEqual([['Service envoy-gateway-system/webapp-gateway', { metadata: { annotations: { [REJUDGE_ANNOTATION]: new Date(at(STUCK_GATEWAY_SECONDS)).toISOString() } } }]]);
    expect(lines).toEqual([
      `Envoy Gateway left Gateway webapp/webapp Programmed=False (AddressNotAssigned) since ${since} with its Envoy Service and Deployment ready (envoyproxy/gateway#9432): Service envoy-gateway-system/webapp-gateway annotated, to be judged again`,
    ]);
  });

  it('leaves alone a Gateway whose Envoy Deployment is not available, whose Service is missing, or that is unprogrammed for another reason', async () => {
    const { stuck, patches } = cluster({
      Gateway: [
        gateway('webapp', { status: 'False', reason: 'NoResources' }),
        gateway('billing', { status: 'False', reason: 'AddressNotAssigned' }),
        gateway('shop', { status: 'False', reason: 'Invalid' }),
      ],
      Service: [service('webapp'), service('shop')],
      Deployment: [deployment('webapp', false), deployment('billing', true), deployment('shop', true)],
    });
    await stuck.poll(at(600));
    expect(patches).toEqual([]);
  });
});

describe("the dry-run cluster's CRDs (e2e/dry-run.ts installCrds)", () => {
  const crd = (name: string, kind: string, versions: { name: string; served: boolean }[]): KubeObject => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: { group: 'example.com', names: { kind }, versions },
  });

  it('waits until every served version of each CRD is served, and does not wait for a CRD the server refused', async () => {
    const applied: string[] = [];
    const asked: string[] = [];
    const client = {
      apply: async (object: KubeObject) => {
        if (object.metadata.name === 'refused.example.com') throw new ApiError(422, 'Invalid', 'PATCH CustomResourceDefinition/refused.example.com: 422 invalid');
        applied.push(object.metadata.name);
        return object;
      },
      // Each served version answers on its third question, as discovery does a moment after Established.
      resource: async (apiVersion: string, kind: string) => {
        asked.push(`${apiVersion}/${kind}`);
        return asked.filter((a) => a === `${apiVersion}/${kind}`).length >= 3 ? { namespaced: true } : undefined;
      },
    } as unknown as KubeClient;
    const logged: string[] = [];
    await installCrds(
      client,
      [crd('widgets.example.com', 'Widget', [{ name: 'v1', served: true }, { name: 'v1alpha1', served: false }, { name: 'v2', served: true }]), crd('refused.example.com', 'Refused', [{ name: 'v1', served: true }])],
      10_000,
      (line) => logged.push(line),
    );
    expect(applied).toEqual(['widgets.example.com']);
    expect([...new Set(asked)]).toEqual(['example.com/v1/Widget', 'example.com/v2/Widget']);
    expect(asked.filter((a) => a === 'example.com/v2/Widget')).toHaveLength(3);
    expect(logged).toEqual(['CRD refused.example.com: PATCH CustomResourceDefinition/refused.example.com: 422 invalid']);
  });

  it('names the kind that is never served', async () => {
    const client = { apply: async (object: KubeObject) => object, resource: async () => undefined } as unknown as KubeClient;
    await expect(installCrds(client, [crd('widgets.example.com', 'Widget', [{ name: 'v1', served: true }])], 600, () => undefined)).rejects.toThrow(
      /timed out after 1 s waiting for Widget \(example\.com\/v1\) to be served/,
    );
  });
});

describe("the cluster's processes (e2e/processes.ts Supervisor)", () => {
  it('starts one at the priority it asks, the others at the default', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-supervisor-'));
    const supervisor = new Supervisor(path.join(dir, 'logs'), dir);
    try {
      const low = supervisor.start({ name: 'low', command: 'sleep', args: ['30'], niceness: 19 });
      const usual = supervisor.start({ name: 'usual', command: 'sleep', args: ['30'] });
      expect(os.getPriority(low.pid!)).toBe(19);
      expect(os.getPriority(usual.pid!)).toBe(os.getPriority());
    } finally {
      await supervisor.stopAll();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the programs the harness starts', () => {
  // A run is bound by CPU; Go's collector took about a third of the API server's at GOGC=100.
  it('collect garbage at GOGC=400, unless the caller sets GOGC', () => {
    const gogc = () => run('sh', ['-c', 'printf %s "$GOGC"']);
    const saved = process.env.GOGC;
    try {
      delete process.env.GOGC;
      expect(gogc()).toBe(E2E_GOGC);
      expect(E2E_GOGC).toBe('400');
      process.env.GOGC = '150';
      expect(gogc()).toBe('150');
    } finally {
      if (saved === undefined) delete process.env.GOGC;
      else process.env.GOGC = saved;
    }
  });
});

describe("the harness's operator sync", () => {
  it("carries the Application's sync options and retry, as the API server's sync does (argocd applies server-side)", () => {
    const argocd = findObject(committedObjects('local'), 'Application', INFRASTRUCTURE_RELEASES.argoCd.name);
    const operation = operatorSyncOperation(argocd) as { sync: { syncOptions?: string[] }; retry?: unknown };
    expect(argocd.spec.syncPolicy.syncOptions).toContain('ServerSideApply=true');
    expect(operation.sync.syncOptions).toEqual(argocd.spec.syncPolicy.syncOptions);
    expect(operation.retry).toEqual(argocd.spec.syncPolicy.retry);
    expect(operatorSyncOperation(undefined)).toEqual({ initiatedBy: { username: 'e2e-operator' }, sync: { syncStrategy: { hook: {} } } });
  });
});
