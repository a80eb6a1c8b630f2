import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { RefusedError, UsageError } from '../src/base/errors';
import { InfrastructureChart } from '../src/charts/infrastructure-chart';
import { ENVIRONMENT_ORDER, type Environment } from '../src/environments';
import { loadPlatform } from '../src/environments/platform';
import { environmentValuesPath } from '../src/environments/values-file';
import { compareReleaseVersions, knownVersions, RELEASE_NAMES, type ReleaseName, SUPPORTED_VERSIONS, versionFacts } from '../src/contract/release-versions';
import { HELM_RELEASE_ROWS, RELEASE_ROWS, releaseIn, releaseVersion } from '../src/infrastructure/releases';
import { supportedKubernetesMinors } from '../src/infrastructure/supported-kubernetes';
import { planUpgrade, planVersionPromotion, versionPath } from '../src/release/upgrade';
import { environmentFilesCopy, environmentsOf, projectEnvironments, ROOT, valuesProblemsWith } from './support';

/** A release the table knows two versions of, for the moves between them. */
const MOVED = RELEASE_NAMES.find((name) => knownVersions(name).length > 1)!;
const [OLDER, NEWER] = knownVersions(MOVED).slice(-2) as [string, string];

/** The project's environments with `release` at `versions[<environment>]` where given. */
function environmentsWith(release: ReleaseName, versions: Partial<Record<string, string>>): Environment[] {
  const tree = environmentFilesCopy();
  for (const [environment, version] of Object.entries(versions)) tree[environment].environment.infrastructure.versions[release] = version;
  return environmentsOf(tree);
}

describe('the supported versions of the infrastructure releases', () => {
  it('knows at least one version of every release and a second of one, for moving between them', () => {
    for (const name of RELEASE_NAMES) expect(knownVersions(name).length, name).toBeGreaterThan(0);
    expect(MOVED).toBeDefined();
  });

  // 9.2: an explicit chart version, no range.
  it('writes every version exactly: no range, no *, no latest', () => {
    for (const name of RELEASE_NAMES) for (const version of knownVersions(name)) expect(version, name).toMatch(/^v?\d+\.\d+\.\d+$/);
  });

  it("keeps each row's chart version the newest version the table knows", () => {
    for (const row of RELEASE_ROWS) expect(releaseVersion(row), row.name).toBe(knownVersions(row.name).at(-1));
  });

  it('names only CRD schema files that exist, each kept for one release', () => {
    const owners = new Map<string, string>();
    for (const name of RELEASE_NAMES) {
      for (const version of knownVersions(name)) {
        for (const file of versionFacts(name, version)!.crdSchemas) {
          expect(fs.existsSync(path.join(ROOT, 'schemas', 'crds', file)), `${name} ${version}: ${file}`).toBe(true);
          expect(owners.get(file) ?? name, file).toBe(name);
          owners.set(file, name);
        }
      }
    }
  });

  it('supports, in every version, each Kubernetes minor the platform supports', () => {
    for (const name of RELEASE_NAMES) {
      for (const version of knownVersions(name)) {
        const { kubernetes } = versionFacts(name, version)!;
        for (const minor of supportedKubernetesMinors()) {
          const supported = Array.isArray(kubernetes) ? kubernetes.includes(minor) : compareReleaseVersions(minor, (kubernetes as { from: string }).from) >= 0;
          expect(supported, `${name} ${version} on ${minor}`).toBe(true);
        }
      }
    }
  });

  it('orders versions by their numbers, with or without a v', () => {
    expect(compareReleaseVersions('v1.9.1', 'v1.10.0')).toBeLessThan(0);
    expect(compareReleaseVersions('91.9.0', '91.10.0')).toBeLessThan(0);
    expect(compareReleaseVersions('1.2.0', '1.2.0')).toBe(0);
  });

  it('lists every release in the table, and nothing else', () => {
    expect(Object.keys(SUPPORTED_VERSIONS).sort()).toEqual(RELEASE_ROWS.map((row) => row.name).sort());
  });
});

describe("an environment's infrastructure versions (infrastructure.versions)", () => {
  it('names the version of every release in every environment', () => {
    for (const environment of Object.values(projectEnvironments())) {
      expect(Object.keys(environment.infrastructure.versions).sort(), environment.name).toEqual([...RELEASE_NAMES].sort());
    }
  });

  it('refuses a version the table does not know, naming the file, the field and the versions it knows', () => {
    const file = environmentValuesPath('testing');
    const problems = valuesProblemsWith(file, (document) => document.setIn(versionPath(MOVED), '0.0.0'));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${file}:\\d+: infrastructure\\.versions\\.${MOVED} "0\\.0\\.0" must be a version the release table knows \\(src/contract/release-versions\\.ts\\): ${knownVersions(MOVED).join(', ').replace(/\./g, '\\.')}$`));
  });

  it('refuses an environment that leaves a release out', () => {
    const file = environmentValuesPath('staging');
    const problems = valuesProblemsWith(file, (document) => document.deleteIn(versionPath(MOVED)));
    expect(problems.join('\n')).toContain(`${file}:`);
    expect(problems.join('\n')).toContain(`infrastructure.versions.${MOVED}`);
  });

  it("renders each release's Application at the version its environment names, the others' unchanged", () => {
    const environments = environmentsWith(MOVED, { local: OLDER, testing: NEWER });
    const platform = loadPlatform();
    const revisions = (name: string) => {
      const chart = new InfrastructureChart(new App(), 'infrastructure', { environment: environments.find((environment) => environment.name === name)!, platform });
      return Object.fromEntries(
        Testing.synth(chart)
          .filter((object) => object.kind === 'Application')
          .map((object) => [object.metadata.name, object.spec.source?.targetRevision ?? object.spec.sources?.[0]?.targetRevision]),
      );
    };
    expect(revisions('local')[MOVED]).toBe(OLDER);
    expect(revisions('testing')[MOVED]).toBe(NEWER);
    const testing = environments.find((environment) => environment.name === 'testing')!;
    // A manifests release's Application follows this repository's branch; its tag is its kustomization's (test/argo-cd-kustomization.test.ts).
    for (const row of HELM_RELEASE_ROWS) expect(revisions('testing')[row.name], row.name).toBe(releaseVersion(releaseIn(row, testing)));
  });
});

describe('npm run upgrade: the plan', () => {
  const first = ENVIRONMENT_ORDER[0];

  it('edits the one field of the environment values that names the version', () => {
    const edit = planUpgrade(environmentsWith(MOVED, { [first]: OLDER }), first, MOVED, NEWER);
    expect(edit).toMatchObject({ environment: first, file: environmentValuesPath(first), path: versionPath(MOVED), value: NEWER, unchanged: false });
    expect(edit.summary).toBe(`${first}: ${MOVED} ${OLDER} -> ${NEWER}`);
  });

  it('refuses a version the table does not know as a bad argument, naming the versions it knows', () => {
    expect(() => planUpgrade(environmentsWith(MOVED, {}), first, MOVED, '0.0.0')).toThrow(UsageError);
    expect(() => planUpgrade(environmentsWith(MOVED, {}), first, MOVED, '0.0.0')).toThrow(`one of ${knownVersions(MOVED).join(', ')}`);
  });

  it('refuses a release that is not one, naming the releases', () => {
    expect(() => planUpgrade(environmentsWith(MOVED, {}), first, 'no-such-release', NEWER)).toThrow(`--release "no-such-release" is not an infrastructure release (src/infrastructure/releases.ts): one of ${RELEASE_NAMES.join(', ')}`);
  });

  it('refuses a downgrade unless allowed', () => {
    const environments = environmentsWith(MOVED, { [first]: NEWER });
    expect(() => planUpgrade(environments, first, MOVED, OLDER)).toThrow(new RefusedError(`${OLDER} is older than the ${MOVED} ${NEWER} ${first} runs; pass --allow-downgrade to move ${first} back to it`));
    expect(planUpgrade(environments, first, MOVED, OLDER, { allowDowngrade: true }).value).toBe(OLDER);
  });

  it('refuses production before staging runs the version, and takes it once staging does', () => {
    const older = Object.fromEntries(ENVIRONMENT_ORDER.map((name) => [name, OLDER]));
    expect(() => planUpgrade(environmentsWith(MOVED, older), 'production', MOVED, NEWER)).toThrow(
      `production runs a version after staging runs it (${ENVIRONMENT_ORDER.join(' -> ')}): staging runs ${MOVED} ${OLDER}, not ${NEWER}; upgrade staging first`,
    );
    expect(() => planUpgrade(environmentsWith(MOVED, older), 'staging', MOVED, NEWER)).toThrow('staging runs a version after testing runs it');
    expect(planUpgrade(environmentsWith(MOVED, { ...older, staging: NEWER }), 'production', MOVED, NEWER).value).toBe(NEWER);
  });

  it('upgrades local and testing while staging and production keep their version', () => {
    const older = Object.fromEntries(ENVIRONMENT_ORDER.map((name) => [name, OLDER]));
    expect(planUpgrade(environmentsWith(MOVED, older), 'local', MOVED, NEWER).value).toBe(NEWER);
    expect(planUpgrade(environmentsWith(MOVED, older), 'testing', MOVED, NEWER).value).toBe(NEWER);
  });

  it('has nothing to write when the environment runs the version already', () => {
    expect(planUpgrade(environmentsWith(MOVED, { [first]: NEWER }), first, MOVED, NEWER).unchanged).toBe(true);
  });
});

describe('npm run promote -- --release: the plan', () => {
  it('carries the version one environment runs to the next', () => {
    const edit = planVersionPromotion(environmentsWith(MOVED, { testing: NEWER, staging: OLDER }), 'testing', 'staging', MOVED);
    expect(edit).toMatchObject({ environment: 'staging', file: environmentValuesPath('staging'), path: versionPath(MOVED), value: NEWER });
    expect(edit.summary).toBe(`staging: ${MOVED} ${OLDER} -> ${NEWER} (promoted from testing)`);
  });

  it('follows the environment order as a tag promotion does', () => {
    expect(() => planVersionPromotion(environmentsWith(MOVED, {}), 'local', 'staging', MOVED)).toThrow('"local" -> "staging" skips testing');
    expect(() => planVersionPromotion(environmentsWith(MOVED, {}), 'staging', 'testing', MOVED)).toThrow('moves backward');
  });

  it('refuses to carry an older version forward unless allowed', () => {
    const environments = environmentsWith(MOVED, { staging: OLDER, production: NEWER });
    expect(() => planVersionPromotion(environments, 'staging', 'production', MOVED)).toThrow(`staging runs ${MOVED} ${OLDER}, older than the ${NEWER} production runs`);
    expect(planVersionPromotion(environments, 'staging', 'production', MOVED, { allowOlder: true }).value).toBe(OLDER);
  });
});
