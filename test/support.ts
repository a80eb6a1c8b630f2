import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readManifestTree } from '../src/base/manifest-files';
import { spawnSync } from 'node:child_process';
import { parseAllDocuments, stringify } from 'yaml';
import { type Application, ENVIRONMENT_ORDER, loadEnvironments, type Environment } from '../src/environments';
import { readValuesTexts, VALUES_DIR, ValuesFile } from '../src/environments/values-file';
import { afterAll, beforeAll, expect } from 'vitest';
import { BUILD_DIR, bundleOf } from '../scripts/build.cjs';
import { ConfigError } from '../src/base/errors';
import { renderEnvironment, synthesize } from '../src/synth';
import { type Command, executeCommand } from '../src/tooling/cli';

export const ROOT = path.resolve(__dirname, '..');
export const DIST = path.join(ROOT, 'dist');

/** A rendered Kubernetes object, as a reviewer reads it. */
export interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string>; readonly annotations?: Record<string, string> };
  readonly [key: string]: any;
}

/** A fresh temporary folder, removed by the caller. */
export function temporaryDirectory(prefix = 'platform-gitops-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * The project's committed files (dist/, the values files) as parsed, by path, with the text
 * each was parsed from: test files read the same files again and again, and parsing them was
 * about half of the unit tier's CPU. A file whose text changed is parsed again; every caller
 * gets its own copy.
 */
const committedParses = new Map<string, { readonly text: string; readonly documents: readonly unknown[] }>();

/** Every document of YAML `text`, as data. */
function documentsOf(text: string): any[] {
  return parseAllDocuments(text).map((doc) => doc.toJS());
}

/** The documents of YAML `text`, the file at `file`, parsed once while its text stays the same. */
function parsedCommitted(file: string, text: string): any[] {
  let parsed = committedParses.get(file);
  if (parsed?.text !== text) {
    parsed = { text, documents: documentsOf(text) };
    committedParses.set(file, parsed);
  }
  return structuredClone(parsed.documents) as any[];
}

/** The objects of one YAML file (parsed once when the file is in dist/). */
function parseManifestFile(file: string): K8sObject[] {
  const text = fs.readFileSync(file, 'utf8');
  return path.relative(DIST, file).startsWith('..') ? documentsOf(text) : parsedCommitted(file, text);
}

/** Parse every YAML file below `dir` into objects, keyed by relative path. */
export function readManifests(dir: string): Map<string, K8sObject[]> {
  // The rendered manifests, a kustomization's folder (kustomize's input) left out.
  const files = [...readManifestTree(dir).keys()];
  return new Map(files.map((file) => [file, parseManifestFile(path.resolve(dir, file))]));
}

/** Render one environment to a temporary folder; returns its files' objects. */
export function renderToObjects(environment: Environment): Map<string, K8sObject[]> {
  const dir = temporaryDirectory();
  try {
    renderEnvironment(environment, dir);
    return readManifests(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** All objects of the committed `dist/<environment>/`. */
export function committedObjects(environment: string): K8sObject[] {
  return [...readManifests(path.join(DIST, environment)).values()].flat();
}

/** The one object of a kind and name; throws when there is not exactly one. */
export function findObject(objects: readonly K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected one ${kind}/${name}, found ${found.length}`);
  return found[0]!;
}

/** The first application of an environment, by name: the one tests that act on one application use. */
export function firstApplication(environment: Environment): Application {
  return environment.applications[0]!;
}

/** The validated project environments, by name. */
export function projectEnvironments(): Record<string, Environment> {
  return Object.fromEntries(loadEnvironments().map((env) => [env.name, env]));
}

/**
 * The values files as plain data, for tests that break one: `files.<environment>.environment`
 * is `environment.yaml`, `files.<environment>.<application>` the application's file.
 */
export type ValuesTree = Record<string, any>;

/** A deep, mutable copy of the project's values files as data. */
export function environmentFilesCopy(): ValuesTree {
  const tree: ValuesTree = {};
  for (const [file, text] of readValuesTexts(ROOT)) {
    const [environment, name] = file.slice(VALUES_DIR.length + 1).replace(/\.yaml$/, '').split('/') as [string, string];
    (tree[environment] ??= {})[name] = parsedCommitted(path.join(ROOT, file), text)[0];
  }
  return tree;
}

/** Values files (project-relative path -> YAML text) holding `tree`. */
export function valuesTexts(tree: ValuesTree): Map<string, string> {
  const texts = new Map<string, string>();
  for (const [environment, files] of Object.entries(tree)) {
    for (const [name, data] of Object.entries(files as Record<string, unknown>)) texts.set(`${VALUES_DIR}/${environment}/${name}.yaml`, stringify(data));
  }
  return texts;
}

/** The environments `tree` validates to. */
export function environmentsOf(tree: ValuesTree): Environment[] {
  return loadEnvironments(valuesTexts(tree));
}

/** A problem without its line number: tests that build values from data pin file, field and rule. */
export function withoutLine(problem: string): string {
  return problem.replace(/^(\S+\.yaml):\d+:/, '$1:');
}

export { ENVIRONMENT_ORDER };

/** What a command did: its exit code and what it printed. */
export interface CommandRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Run a command (src/commands/) in this process on the project at `root`, the way its entry
 * point would: the same parsing, messages and exit code, without starting node. Tests of
 * behaviour use this; one spawn per command (`runCli`) pins the entry point itself.
 */
export async function runInProcess(definition: Command, args: readonly string[], root: string = ROOT, env: NodeJS.ProcessEnv = {}): Promise<CommandRun> {
  let stdout = '';
  let stderr = '';
  const status = await executeCommand(definition, args, {
    root,
    env: { ...process.env, ...env },
    out: (text) => void (stdout += text),
    err: (text) => void (stderr += text),
  });
  return { status, stdout, stderr };
}

/** Run a command from the compiled bundles (`node build/<bundle>.js <command> ...`, what scripts/run.cjs runs) as a person would. */
export function runCli(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): CommandRun {
  const result = spawnSync(process.execPath, [path.join(BUILD_DIR, `${bundleOf(command)}.js`), command, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Every file below `dir` with its bytes, for before/after comparisons. */
export function treeContents(dir: string): Map<string, string> {
  const files = (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
  return new Map(files.map((file) => [file, fs.readFileSync(path.join(dir, file), 'utf8')]));
}

/**
 * Synthesize into `outdir` expecting a refusal: returns the problems, after asserting that
 * `outdir` is byte for byte what it was and no temporary folder is left beside it.
 */
export function refusedSynth(
  outdir: string,
  files: ValuesTree,
  order: readonly string[] = ENVIRONMENT_ORDER,
  platform?: unknown,
  committed: 'head' | 'outdir' = 'head',
): string[] {
  const before = treeContents(outdir);
  const siblings = fs.readdirSync(path.dirname(outdir)).sort();
  let caught: unknown;
  try {
    synthesize({ outdir, order, texts: valuesTexts(files), platform, committed });
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  expect(treeContents(outdir)).toEqual(before);
  expect(fs.readdirSync(path.dirname(outdir)).sort()).toEqual(siblings);
  return (caught as ConfigError).problems.map(withoutLine);
}

/** A working copy of the committed dist/ in a fresh temporary folder; remove `path.dirname(outdir)` after. */
export function committedDistCopy(): string {
  const outdir = path.join(temporaryDirectory(), 'dist');
  fs.cpSync(DIST, outdir, { recursive: true });
  return outdir;
}

/** Edits a person might make to the environment files, in a test. */
export type BreakFiles = (files: ValuesTree) => void;

/**
 * For a file of tests that expect refusals: keeps a copy of the committed dist/ from before
 * the file's first test until after its last, and returns `refused(breakFiles, order?, platform?)`,
 * which synthesizes a broken copy of the environment files into that copy and returns the
 * problems, asserting the copy is still byte for byte the committed dist/.
 */
export function refusalsAgainstCommittedDist(): (breakFiles: BreakFiles, order?: readonly string[], platform?: unknown) => string[] {
  let outdir = '';
  let committed = new Map<string, string>();
  beforeAll(() => {
    outdir = committedDistCopy();
    committed = treeContents(outdir);
  });
  afterAll(() => fs.rmSync(path.dirname(outdir), { recursive: true, force: true }));
  return (breakFiles, order = ENVIRONMENT_ORDER, platform) => {
    const files = environmentFilesCopy();
    breakFiles(files);
    const problems = refusedSynth(outdir, files, order, platform);
    expect(treeContents(outdir)).toEqual(committed);
    return problems;
  };
}

/** The version after `version` (`<major>.<minor>.<patch>`) in its patch number. */
export function nextPatch(version: string): string {
  const [major, minor, patch] = version.split('.').map(Number) as [number, number, number];
  return `${major}.${minor}.${patch + 1}`;
}

/** The project's values files with one of them edited: the problems validation finds (none: []). */
export function valuesProblemsWith(file: string, edit: (document: ValuesFile['document']) => void, texts: ReadonlyMap<string, string> = readValuesTexts(ROOT)): readonly string[] {
  const text = new ValuesFile(file, texts.get(file)!).edited(edit);
  try {
    loadEnvironments(new Map([...texts, [file, text]]));
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
