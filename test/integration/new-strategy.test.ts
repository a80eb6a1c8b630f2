import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadAll } from 'js-yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { applicationValuesPath } from '../../src/environments/values-file';
import { chartVersionsPath } from '../../src/synth/chart-versions';
import { commitCopy, git, projectCopy } from '../project-copy';
import { type K8sObject, nextPatch, ROOT } from '../support';

/**
 * A delivery strategy is one folder of src/strategies/ and an entry in each half of the
 * registry: a fourth one, `recreate` (test/fixtures/strategies/recreate/), added to a copy of
 * the project with nothing else changed, typechecks, renders, and is what an application's
 * values file may choose.
 */
const FIXTURE = path.join(__dirname, '..', 'fixtures', 'strategies', 'recreate');
const FOLDER = 'src/strategies/recreate';
const REGISTRIES = { values: 'src/strategies/values-registry.ts', rendering: 'src/strategies/registry.ts' } as const;
/** The local application switched to recreate. */
const APPLICATION = 'billing';
const VALUES_FILE = applicationValuesPath('local', APPLICATION);

let root: string;
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** Insert `line` into the copy's `file` right after `anchor`, which must stand in it exactly once. */
function insertAfter(file: string, anchor: string, line: string): void {
  const full = path.join(root, file);
  const text = fs.readFileSync(full, 'utf8');
  expect(text.split(anchor), `${file}: the anchor ${JSON.stringify(anchor)}`).toHaveLength(2);
  fs.writeFileSync(full, text.replace(anchor, `${anchor}${line}\n`));
}

/** The files of the copy that differ from its commit (untracked ones listed one by one), sorted. */
function changedFiles(): string[] {
  return git(root, 'status', '--porcelain', '--untracked-files=all')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(3))
    .sort();
}

function run(command: string, args: readonly string[]) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}`.slice(-4000) };
}

describe('a new delivery strategy', () => {
  it('touches only its own folder and the registry: it typechecks, validates and renders', () => {
    root = projectCopy();
    commitCopy(root);

    fs.cpSync(FIXTURE, path.join(root, FOLDER), { recursive: true });
    insertAfter(REGISTRIES.values, "import { canary } from './canary/values';\n", "import { recreate } from './recreate/values';");
    insertAfter(REGISTRIES.values, '  canary,\n', '  recreate,');
    insertAfter(REGISTRIES.rendering, "import { canary } from './canary';\n", "import { recreate } from './recreate';");
    insertAfter(REGISTRIES.rendering, '  canary,\n', '  recreate,');
    const values = fs.readFileSync(path.join(root, VALUES_FILE), 'utf8');
    expect(values).toMatch(/^strategy:\n {2}type: rolling$/m);
    fs.writeFileSync(path.join(root, VALUES_FILE), values.replace(/^(strategy:\n {2}type:) rolling$/m, '$1 recreate'));

    const touched = [...fs.readdirSync(FIXTURE).map((file) => `${FOLDER}/${file}`), ...Object.values(REGISTRIES), VALUES_FILE].sort();
    expect(changedFiles()).toEqual(touched);

    const typecheck = run(process.execPath, ['node_modules/typescript-native/bin/tsc', '-p', '.']);
    expect(typecheck.status, typecheck.output).toBe(0);
    // The copy's own `synth` script, whatever its entry is called there.
    const scripts = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['synth']).toBeDefined();
    const synth = run('npm', ['run', '--silent', 'synth']);
    expect(synth.status, synth.output).toBe(0);

    const chart = `dist/local/${APPLICATION}.yaml`;
    const objects = loadAll(fs.readFileSync(path.join(root, chart), 'utf8')) as K8sObject[];
    const deployment = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === APPLICATION);
    expect(deployment?.spec.strategy).toEqual({ type: 'Recreate' });
    // Like rolling: the Service selects the Deployment's pods, and the HTTPRoute leads to it.
    const named = (kind: string) => objects.find((object) => object.kind === kind && object.metadata.name === APPLICATION);
    expect(named('Service')?.spec.selector).toEqual({ app: APPLICATION });
    expect(named('HTTPRoute')?.spec.rules.flatMap((rule: { backendRefs: { name: string }[] }) => rule.backendRefs.map((backend) => backend.name))).toEqual([APPLICATION]);
    // Besides the sources above, only the switched application's chart renders anew, and its
    // chart's version moves (a values change: a patch).
    const versions = chartVersionsPath('local');
    expect(changedFiles()).toEqual([...touched, chart, versions].sort());
    const version = (JSON.parse(fs.readFileSync(path.join(root, versions), 'utf8')) as Record<string, { version: string }>)[APPLICATION]!.version;
    const committed = (JSON.parse(fs.readFileSync(path.join(ROOT, versions), 'utf8')) as Record<string, { version: string }>)[APPLICATION]!.version;
    expect(version).toBe(nextPatch(committed));
  }, 300_000);
});
