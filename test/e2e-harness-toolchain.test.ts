import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMAGES } from '../src/contract/images';
import { INFRASTRUCTURE_RELEASES } from '../src/infrastructure/releases';
import { COMPONENT_SUPPORT, supportedKubernetesMinors } from '../src/infrastructure/supported-kubernetes';
import { E2E_GOGC, run, Supervisor } from '../e2e/processes';
import { ROOT } from './support';

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
