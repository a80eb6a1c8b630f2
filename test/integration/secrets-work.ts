import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, expect } from 'vitest';
import { encryptedFileName, secretsPath } from '../../src/contract/layout';
import { secretCatalog } from '../../src/secrets/catalog';
import { type InitOptions, initEnvironment } from '../../src/secrets/init';
import { type SopsTools, sopsTools } from '../../src/secrets/sops';
import { ROOT, projectEnvironments, temporaryDirectory } from '../support';

const environments = projectEnvironments();
export const local = environments.local!;
/** The application of local whose Secrets the tests read. */
export const localApp = () => local.applications[0]!;
export const testing = environments.testing!;

/** The parts of the repository init reads and writes, without any encrypted file, in a fresh git work tree. */
export function repositoryCopy(): string {
  const dir = temporaryDirectory('platform-gitops-secrets-');
  fs.copyFileSync(path.join(ROOT, '.sops.yaml'), path.join(dir, '.sops.yaml'));
  fs.cpSync(path.join(ROOT, 'secrets'), path.join(dir, 'secrets'), { recursive: true, filter: (source) => !source.endsWith('.sops.yaml') });
  expect(spawnSync('git', ['init', '--quiet', dir]).status).toBe(0);
  return dir;
}

/** The sops and age tools, a scratch directory and one for age keys: set by useSecretsWork before each file's tests. */
export let tools: SopsTools;
export let work: string;
export let keys: string;

/** Build (or find cached) sops and age, and make the scratch directories, before a file's tests; remove them after. */
export function useSecretsWork(): void {
  beforeAll(() => {
    // Builds sops and age-keygen from their Go modules the first time (cached afterwards).
    tools = sopsTools(ROOT);
    work = temporaryDirectory('platform-gitops-secrets-work-');
    keys = temporaryDirectory('platform-gitops-age-');
  }, 600_000);

  afterAll(() => {
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(keys, { recursive: true, force: true });
  });
}

/** What real sops decrypts a file to with `keyFile`, as a person would run it. */
export function decrypt(root: string, file: string, keyFile: string): { status: number | null; manifest: any; stderr: string } {
  const result = spawnSync(tools.sops, ['decrypt', path.join(root, file)], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: keys, SOPS_AGE_KEY_FILE: keyFile },
  });
  return { status: result.status, manifest: result.status === 0 ? parse(result.stdout) : undefined, stderr: result.stderr };
}

export function fileOf(environment: typeof local, secret: string): string {
  const spec = secretCatalog(environment).find((candidate) => candidate.name === secret)!;
  return `${secretsPath(environment.name, spec.group)}/${encryptedFileName(secret)}`;
}

export function init(options: Partial<InitOptions> & { root: string; keyFile: string }) {
  return initEnvironment({ environment: local, tools, env: {}, ...options });
}
