import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { RefusedError } from '../src/base/errors';
import { SMOKE } from '../src/contract/contract';
import { login } from '../src/smoke/http';
import { checkSynthesized } from '../src/synth';
import { assertReplaceable } from '../src/synth/output-folder';
import { readRenderedTree, RENDERED_TREE_LIMITS } from '../src/validation/manifests';
import { ROOT } from './support';

// What a command reads or replaces is bounded by what it is for: synth compares and replaces
// only a folder it rendered, and the gate reads only the rendered layout, whatever path a
// person types.

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
});
function scratch(): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'bounded-'));
  folders.push(folder);
  return folder;
}

describe('synth --check', () => {
  it('refuses to compare against the filesystem root instead of walking it', () => {
    expect(() => checkSynthesized({ outdir: '/', root: ROOT })).toThrow(RefusedError);
    expect(() => checkSynthesized({ outdir: '/', root: ROOT })).toThrow('--outdir "/" is the project root or a folder above it');
  });
});

describe('the output folder', () => {
  it('refuses a path that reaches src/ through a link on the way', () => {
    const link = path.join(scratch(), 'project-src');
    fs.symlinkSync(path.join(ROOT, 'src'), link);
    expect(() => assertReplaceable(path.join(link, 'rendered'), ROOT)).toThrow(`--outdir "${path.join(link, 'rendered')}" is inside src/`);
  });

  it('refuses a path that reaches the project root through a link on the way', () => {
    const link = path.join(scratch(), 'project');
    fs.symlinkSync(ROOT, link);
    expect(() => assertReplaceable(path.join(link, 'src', 'x'), ROOT)).toThrow('is inside src/');
  });
});

describe('what the gate reads', () => {
  it('reads the files of each environment folder, not folders below them', () => {
    const dir = scratch();
    fs.mkdirSync(path.join(dir, 'local', 'deeper'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'local', 'a.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n');
    fs.writeFileSync(path.join(dir, 'local', 'deeper', 'b.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n');
    expect(readRenderedTree(dir).objects.map((located) => located.object.metadata?.name)).toEqual(['a']);
  });

  it('does not read a file over the size limit', () => {
    const dir = scratch();
    fs.mkdirSync(path.join(dir, 'local'));
    const big = path.join(dir, 'local', 'big.yaml');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, RENDERED_TREE_LIMITS.fileBytes + 1);
    expect(readRenderedTree(dir).unreadable).toEqual([
      { environment: 'local', file: 'big.yaml', problem: `${RENDERED_TREE_LIMITS.fileBytes + 1} bytes, more than a rendered file may have (${RENDERED_TREE_LIMITS.fileBytes})` },
    ]);
  });
});

describe('what the smoke test reads from the application', () => {
  it('stops reading a login answer that does not end, naming the limit', async () => {
    const server = http.createServer((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const write = (): void => {
        while (response.write(chunk));
        response.once('drain', write);
      };
      write();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      await expect(login(`http://127.0.0.1:${port}`, 'user', 'password', AbortSignal.timeout(20_000))).rejects.toThrow(
        `POST /api/auth/login returned a body of more than ${SMOKE.maxBodyBytes} bytes`,
      );
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
