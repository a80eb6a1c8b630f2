import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The layers of the program, bottom first: a module may import its own layer and the ones
// below it, never one above. docs/architecture.md describes each layer; this table is the
// one list. A path matches its longest prefix here; a `*` in one stands for one folder name
// (each strategy's values module is configuration, the rest of its folder is strategies).
const ROOT = path.resolve(__dirname, '..');
export const LAYERS: readonly { readonly name: string; readonly paths: readonly string[] }[] = [
  { name: 'base', paths: ['src/base/', 'src/imports/', 'toolchain/'] },
  { name: 'contract', paths: ['src/contract/'] },
  {
    name: 'configuration',
    paths: [
      'src/environments/',
      'src/infrastructure/',
      'src/secrets/catalog.ts',
      'src/strategies/strategy-values.ts',
      'src/strategies/values-registry.ts',
      'src/strategies/*/values.ts',
    ],
  },
  { name: 'constructs', paths: ['src/constructs/'] },
  { name: 'strategies', paths: ['src/strategies/'] },
  { name: 'charts', paths: ['src/charts/'] },
  { name: 'synth', paths: ['src/synth/', 'src/validation/', 'src/diff/', 'src/release/', 'src/secrets/', 'src/smoke/', 'src/verify/', 'src/bench/', 'src/cluster/', 'src/communication/', 'src/artifact/'] },
  { name: 'commands', paths: ['src/commands/', 'src/main.ts', 'src/tooling/', 'pulumi/'] },
];

/** Folders that are never imported by product code (src/, pulumi/, toolchain/): the e2e harness and the build scripts. */
const NOT_PRODUCT = ['e2e/', 'scripts/'];

/** Whether `file` is or lies below `prefix`, where a `*` of the prefix stands for one folder name. */
function matches(file: string, prefix: string): boolean {
  if (!prefix.includes('*')) return file.startsWith(prefix);
  const pattern = prefix.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+');
  return new RegExp(`^${pattern}`).test(file);
}

function layerOf(file: string): number | undefined {
  let best: { index: number; length: number } | undefined;
  LAYERS.forEach((layer, index) => {
    for (const prefix of layer.paths) {
      if (matches(file, prefix) && (best === undefined || prefix.length > best.length)) best = { index, length: prefix.length };
    }
  });
  return best?.index;
}

function sourceFiles(dir: string): string[] {
  const full = path.join(ROOT, dir);
  if (!fs.existsSync(full)) return [];
  return (fs.readdirSync(full, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile() && /\.(ts|cjs)$/.test(entry.name) && !entry.name.endsWith('.d.cts'))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .filter((file) => !file.startsWith('src/imports/'))
    .sort();
}

/** The project files `file` imports (import, export ... from, require, import type), as project-relative paths. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .map((reference) => reference.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => resolve(path.join(path.dirname(file), name)));
}

function resolve(spec: string): string {
  const candidates = [spec, `${spec}.ts`, `${spec}.cjs`, `${spec}/index.ts`];
  const found = candidates.find((candidate) => fs.existsSync(path.join(ROOT, candidate)) && fs.statSync(path.join(ROOT, candidate)).isFile());
  return (found ?? spec).split(path.sep).join('/');
}

const PRODUCT = ['src', 'pulumi', 'toolchain'].flatMap(sourceFiles);

describe('the layers (docs/architecture.md)', () => {
  it('places every product module in exactly one layer', () => {
    expect(PRODUCT.filter((file) => layerOf(file) === undefined)).toEqual([]);
  });

  it('never imports a module of a layer above', () => {
    const upward = PRODUCT.flatMap((file) =>
      importsOf(file)
        .filter((target) => !target.startsWith('src/imports/') && layerOf(target) !== undefined && layerOf(target)! > layerOf(file)!)
        .map((target) => `${file} (${LAYERS[layerOf(file)!]!.name}) imports ${target} (${LAYERS[layerOf(target)!]!.name})`),
    );
    expect(upward).toEqual([]);
  });

  it('never imports the e2e harness or the build scripts from product code', () => {
    const outside = PRODUCT.flatMap((file) =>
      importsOf(file)
        .filter((target) => NOT_PRODUCT.some((prefix) => target.startsWith(prefix)))
        .map((target) => `${file} imports ${target}`),
    );
    expect(outside).toEqual([]);
  });

  it('has no import cycle', () => {
    const graph = new Map(PRODUCT.map((file) => [file, importsOf(file).filter((target) => PRODUCT.includes(target))]));
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, trail: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const target of graph.get(file) ?? []) visit(target, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of PRODUCT) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('fails for an import that points up (the check itself)', () => {
    // A constructs module importing a chart would be reported.
    expect(layerOf('src/charts/application-chart.ts')!).toBeGreaterThan(layerOf('src/constructs/application-workload.ts')!);
    expect(layerOf('src/contract/naming.ts')!).toBeLessThan(layerOf('src/environments/validate.ts')!);
    // A strategy's values module is configuration (the schema imports it), the rest of its folder is not.
    expect(LAYERS[layerOf('src/strategies/recreate/values.ts')!]!.name).toBe('configuration');
    expect(LAYERS[layerOf('src/strategies/recreate/index.ts')!]!.name).toBe('strategies');
  });
});
