import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RELEASE } from '../../src/commands/release';
import { RENDERED_DIR } from '../../src/contract/layout';
import { EDIT_DIR } from '../../src/release/edit-lock';
import { CHART_VERSIONS_FILE, chartVersionsPath } from '../../src/synth/chart-versions';
import { commitCopy, dataCopy, newerTag } from '../project-copy';
import { runInProcess, treeContents } from '../support';

/**
 * An edit command writes the values file and dist/ together or not at all: writes made to
 * fail one at a time (node:fs wrapped for this file only) leave the copy byte for byte as it was.
 */
const failing = vi.hoisted(() => ({ write: undefined as RegExp | undefined, rename: undefined as RegExp | undefined }));

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const fail = (pattern: RegExp | undefined, file: unknown) => {
    if (pattern !== undefined && pattern.test(String(file))) throw Object.assign(new Error(`EIO: injected failure, ${String(file)}`), { code: 'EIO' });
  };
  const wrapped = {
    ...actual,
    writeFileSync: (file: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
      fail(failing.write, file);
      return (actual.writeFileSync as (...args: unknown[]) => void)(file, ...rest);
    },
    // Once: synthesize's own restore of the previous dist/ must succeed.
    renameSync: (from: fs.PathLike, to: fs.PathLike) => {
      const pattern = failing.rename;
      if (pattern?.test(String(to)) && !String(from).endsWith('-previous')) failing.rename = undefined;
      fail(pattern, to);
      return actual.renameSync(from, to);
    },
  };
  return { ...wrapped, default: wrapped };
});

let root: string;

/** The copy's values files and dist/, every file with its bytes. */
function snapshot(): Map<string, string> {
  return treeContents(root);
}

beforeEach(() => {
  root = dataCopy();
  commitCopy(root);
});
afterEach(() => {
  failing.write = undefined;
  failing.rename = undefined;
  fs.rmSync(root, { recursive: true, force: true });
});

describe('an edit command writes all or nothing', () => {
  it('leaves dist/ and the values files untouched when the values file cannot be written', async () => {
    const before = snapshot();
    // The values file is written whole: a temporary file in the program's working folder, then renamed.
    failing.write = new RegExp(`${path.sep}${EDIT_DIR.replace('.', '\\.')}${path.sep}`);
    const result = await runInProcess(RELEASE, ['--env', 'testing', '--tag', newerTag(root)], root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('injected failure');
    expect(snapshot()).toEqual(before);
  });

  it('removes the temporary values file and leaves the project untouched when dist/ cannot be swapped in', async () => {
    const before = snapshot();
    failing.rename = new RegExp(`${path.sep}${RENDERED_DIR}$`);
    const values = fs.readdirSync(path.join(root, 'src', 'environments', 'testing')).sort();
    const result = await runInProcess(RELEASE, ['--env', 'testing', '--tag', newerTag(root)], root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('injected failure');
    expect(snapshot()).toEqual(before);
    expect(fs.readdirSync(path.join(root, 'src', 'environments', 'testing')).sort()).toEqual(values);
  });

  it('leaves the project untouched when the chart version record cannot be written', async () => {
    const before = snapshot();
    failing.rename = new RegExp(`${path.sep}${CHART_VERSIONS_FILE.replace('.', '\\.')}$`);
    const result = await runInProcess(RELEASE, ['--env', 'testing', '--tag', newerTag(root)], root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`injected failure, ${path.join(root, chartVersionsPath('testing'))}`);
    expect(snapshot()).toEqual(before);
  });

  it('writes the values file, the chart version record and dist/ together when nothing fails', async () => {
    const before = snapshot();
    const result = await runInProcess(RELEASE, ['--env', 'testing', '--tag', newerTag(root)], root);
    expect(result.status).toBe(0);
    const changed = [...snapshot()].filter(([file, text]) => before.get(file) !== text).map(([file]) => file);
    expect(changed.filter((file) => file.startsWith('src/environments/')).sort()).toEqual([chartVersionsPath('testing'), ...changed.filter((file) => file.endsWith('.yaml') && file.startsWith('src/environments/'))].sort());
    expect(changed.filter((file) => file.startsWith('src/environments/'))).toHaveLength(2);
    expect(changed.filter((file) => file.startsWith(`${RENDERED_DIR}/`)).length).toBeGreaterThan(0);
    expect(changed.every((file) => file.startsWith('src/environments/') || file.startsWith(`${RENDERED_DIR}/`))).toBe(true);
  });
});
