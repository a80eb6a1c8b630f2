import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CDK8S_CLI_OUTPUT } from '../../src/contract/layout';
import { projectCopy } from '../project-copy';
import { DIST, ROOT, temporaryDirectory, treeContents } from '../support';

// The cdk8s CLI (`cdk8s synth`, through cdk8s.yaml) runs the same program as npm run synth:
// each test starts the CLI, which starts the program, in a process of its own.

const cleanups: string[] = [];
afterEach(() => {
  for (const dir of cleanups.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('cdk8s synth (the cdk8s CLI)', () => {
  it('`npx cdk8s synth` with an invalid values file refuses and leaves dist/ as it was', () => {
    const copy = projectCopy();
    cleanups.push(copy);
    fs.copyFileSync(path.join(ROOT, 'cdk8s.yaml'), path.join(copy, 'cdk8s.yaml'));
    const file = path.join(copy, 'src', 'environments', 'testing', 'webapp.yaml');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^(\s+tag:) \S+/m, '$1 latest'));
    const before = treeContents(path.join(copy, 'dist'));
    const result = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'cdk8s-cli', 'bin', 'cdk8s'), 'synth'], { cwd: copy, encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('image.tag "latest" must look like v<major>.<minor>.<patch>');
    expect(treeContents(path.join(copy, 'dist'))).toEqual(before);
  });

  it('gives the same output through `cdk8s synth` (cdk8s.yaml), whose scratch output is never dist/', () => {
    expect((parse(fs.readFileSync(path.join(ROOT, 'cdk8s.yaml'), 'utf8')) as { output: string }).output).toBe(CDK8S_CLI_OUTPUT);
    const workdir = temporaryDirectory();
    cleanups.push(workdir);
    const output = path.join(workdir, 'dist');
    const result = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'cdk8s-cli', 'bin', 'cdk8s'), 'synth', '--output', output], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).toBe(0);
    expect(treeContents(output)).toEqual(treeContents(DIST));
  });
});
