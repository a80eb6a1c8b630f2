import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The layers of the program, bottom first: a module may import its own layer and the ones
// below it, never one above. docs/architecture.md describes each layer; this table is the
// one list. A path matches its longest prefix here. Each delivery strategy's values module is
// configuration (src/environments/strategy-<strategy>.ts, the schema is built from them), its folder of
// src/strategies/ renders: so the folders too import one way only (the last tests).
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

/** Whether `file` is or lies below `prefix`. */
function matches(file: string, prefix: string): boolean {
  return file.startsWith(prefix);
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

/** The folder a module counts in for the folder graph: `src/<folder>` (whatever lies below it), or the top folder (pulumi, toolchain) or file. */
function folderOf(file: string): string {
  const parts = file.split('/');
  return parts[0] === 'src' && parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts.length > 1 ? parts[0]! : file;
}

/** Which folders each folder's modules import (its own left out). */
function folderGraph(files: readonly string[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const from = folderOf(file);
    const targets = graph.get(from) ?? new Set<string>();
    graph.set(from, targets);
    for (const target of importsOf(file)) if (files.includes(target) && folderOf(target) !== from) targets.add(folderOf(target));
  }
  return graph;
}

/** Each cycle of the graph a depth-first walk meets, as `a -> b -> a`. */
function folderCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string, trail: string[]): void => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'open') {
      cycles.push([...trail.slice(trail.indexOf(node)), node].join(' -> '));
      return;
    }
    state.set(node, 'open');
    for (const target of [...(graph.get(node) ?? [])].sort()) visit(target, [...trail, node]);
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) visit(node, []);
  return cycles;
}

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
    // A strategy's values module is configuration (the schema imports it), its folder of src/strategies/ is not.
    expect(LAYERS[layerOf('src/environments/strategy-recreate.ts')!]!.name).toBe('configuration');
    expect(LAYERS[layerOf('src/strategies/recreate/index.ts')!]!.name).toBe('strategies');
  });

  it('has no cycle between folders: no folder imports a folder that imports it back, however far round', () => {
    expect(folderCycles(folderGraph(PRODUCT))).toEqual([]);
  });

  it('finds a cycle between folders (the check itself)', () => {
    // The arrow this check ended: the environments' schema imported the strategies' values
    // registry while the strategies imported the environments' types.
    const graph = folderGraph(PRODUCT);
    graph.get('src/environments')!.add('src/strategies');
    expect(folderCycles(graph)).toContainEqual(expect.stringMatching(/^src\/environments -> .*src\/strategies -> .*src\/environments$|^src\/strategies -> .*src\/environments -> .*src\/strategies$/));
  });
});
