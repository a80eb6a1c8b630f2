import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  COMPONENT_SUPPORT,
  KUBERNETES_END_OF_LIFE,
  SUPPORT_REVIEWED_ON,
  supportedKubernetesMinors,
  supportMatrixRows,
} from '../src/infrastructure/supported-kubernetes';
import { INFRASTRUCTURE_RELEASES, isHelmRelease } from '../src/infrastructure/releases';
import { KUBERNETES_VERSIONS, kubernetesSchemaFile } from '../src/validation/schemas';
import { ROOT } from './support';

// The supported Kubernetes range is computed from the table (upstream end of life, every
// component's tested range); the README, the gate's schemas and the e2e cluster follow it.

const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

describe('the supported Kubernetes range', () => {
  it('is the minors supported upstream on the review day and by every pinned component', () => {
    const minors = supportedKubernetesMinors();
    expect(minors.length).toBeGreaterThan(0);
    for (const minor of minors) expect(KUBERNETES_END_OF_LIFE[minor]! > SUPPORT_REVIEWED_ON, minor).toBe(true);
    // Ended upstream before the review: never supported, whatever the components say.
    for (const [minor, endOfLife] of Object.entries(KUBERNETES_END_OF_LIFE)) {
      if (endOfLife <= SUPPORT_REVIEWED_ON) expect(minors, minor).not.toContain(minor);
    }
  });

  it('is what the validation gate checks: both ends, each with its schema file', () => {
    const minors = supportedKubernetesMinors();
    expect([...KUBERNETES_VERSIONS]).toEqual([minors[0], minors[minors.length - 1]]);
    for (const minor of KUBERNETES_VERSIONS) expect(fs.existsSync(path.join(ROOT, 'schemas', kubernetesSchemaFile(minor))), minor).toBe(true);
  });

  it('has the e2e cluster run its newest minor', () => {
    const script = fs.readFileSync(path.join(ROOT, 'toolchain', 'build.sh'), 'utf8');
    const pinned = /^KUBERNETES_VERSION=v(\d+\.\d+)\.\d+$/m.exec(script)?.[1];
    expect(pinned).toBe(supportedKubernetesMinors().at(-1));
  });

  it('shows each component at the version the release table pins', () => {
    const pins = Object.values(INFRASTRUCTURE_RELEASES).map((release) => (isHelmRelease(release) ? release.chart.version : release.manifests.version));
    for (const support of COMPONENT_SUPPORT) {
      expect(pins.some((version) => support.pinned.startsWith(version) || support.pinned.includes(`chart ${version}`)), support.component).toBe(true);
    }
  });
});

describe('README: the supported stack', () => {
  it('states the computed range', () => {
    const minors = supportedKubernetesMinors();
    expect(readme).toContain(`Kubernetes **${minors[0]} to ${minors.at(-1)}**`);
  });

  it('shows the component matrix of the table, row for row', () => {
    const header = '| component | pinned | Kubernetes versions upstream tests or supports | source |';
    expect(readme).toContain(header);
    const after = readme.slice(readme.indexOf(header)).split('\n').slice(2);
    const rows = after.slice(0, after.findIndex((line) => !line.startsWith('|')));
    expect(rows).toEqual(supportMatrixRows());
  });
});
