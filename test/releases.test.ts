import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadEnvironments } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { INFRASTRUCTURE_RELEASES, RELEASE_ROWS, isHelmRelease, releaseNamespace } from '../src/infrastructure/releases';
import { argoCdManifestsPath } from '../src/infrastructure/argo-cd-kustomization';
import { ROOT } from './support';

const { certManager, envoyGateway, argoCd, gatewayApiCrds } = INFRASTRUCTURE_RELEASES;

describe('the infrastructure release table', () => {
  // 9.2: infrastructure chart upgrades name an explicit chart version.
  it('pins every chart to one exact version: no range, no *, no latest', () => {
    for (const release of RELEASE_ROWS) expect(isHelmRelease(release) ? release.chart.version : release.manifests.version, release.name).toMatch(/^v?\d+\.\d+\.\d+$/);
  });

  it('names each release once', () => {
    const names = RELEASE_ROWS.map((release) => release.name);
    expect(new Set(names).size).toBe(names.length);
  });

  // 1.3 step 4: the certificate manager, the ingress controller, Argo CD itself, then the rest.
  it('syncs cert-manager, then the ingress controller (Envoy Gateway), then Argo CD, then the rest', () => {
    const order = [certManager, envoyGateway, argoCd].map((release) => release.syncWave);
    expect(order[0]).toBeLessThan(order[1]!);
    expect(order[1]).toBeLessThan(order[2]!);
    for (const release of RELEASE_ROWS.filter((r) => ![gatewayApiCrds, certManager, envoyGateway, argoCd].includes(r))) {
      expect(release.syncWave, release.name).toBeGreaterThan(argoCd.syncWave);
    }
  });

  // cert-manager looks for the Gateway API CRDs only when it starts ("The Gateway API CRDs
  // should either be installed before cert-manager starts or the cert-manager Deployment
  // should be restarted": cert-manager website, content/docs/usage/gateway.md).
  it('installs the Gateway API CRDs in a wave before cert-manager', () => {
    expect(gatewayApiCrds.syncWave).toBeLessThan(certManager.syncWave);
  });

  it('lists its rows in sync order', () => {
    const waves = RELEASE_ROWS.map((release) => release.syncWave);
    expect(waves).toEqual([...waves].sort((a, b) => a - b));
  });
});

describe('docs/infrastructure.md: the pinned chart versions', () => {
  it('shows the release table: each release with its wave, chart, version, repository and namespace', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'docs', 'infrastructure.md'), 'utf8');
    const header = '| Application | wave | chart | version | repository | namespace |';
    expect(readme).toContain(header);
    const after = readme.slice(readme.indexOf(header)).split('\n').slice(2);
    const rows = after.slice(0, after.findIndex((line) => !line.startsWith('|')));
    const platform = loadPlatform();
    const contexts = loadEnvironments().map((environment) => ({ environment, platform }));
    const expected = RELEASE_ROWS.map((release) => {
      // A namespace an environment decides is listed once per distinct value.
      const namespaces = [...new Set(contexts.map((context) => releaseNamespace(release, context)))];
      // A release from its upstream's manifests shows the folder its environments install.
      const installs = isHelmRelease(release)
        ? { chart: release.chart.chart, version: release.chart.version, repoURL: release.chart.repoURL }
        : { chart: [...new Set(contexts.map(argoCdManifestsPath))].sort().join(', '), version: release.manifests.version, repoURL: release.manifests.repoURL };
      const cells = [`\`${release.name}\``, release.syncWave, installs.chart.split(', ').map((c) => `\`${c}\``).join(', '), `\`${installs.version}\``, installs.repoURL, namespaces.map((n) => `\`${n}\``).join(', ')];
      return `| ${cells.join(' | ')} |`;
    });
    expect(rows).toEqual(expected);
  });
});
