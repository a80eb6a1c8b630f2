import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/build.cjs';

/**
 * toolchain/packages.sh against stand-ins on PATH: `id` (root), `dpkg-query` (nothing
 * installed) and `apt-get`, which records each command line and, while the file `busy`
 * exists, fails as apt 2.6 does when another process holds the package lists' lock (its
 * message, naming that process: a real `sleep` this test started).
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-packages-'));
const bin = path.join(dir, 'bin');
const calls = path.join(dir, 'calls');
const busy = path.join(dir, 'busy');
fs.mkdirSync(bin);
fs.writeFileSync(path.join(bin, 'id'), '#!/bin/sh\necho 0\n', { mode: 0o755 });
fs.writeFileSync(path.join(bin, 'dpkg-query'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
fs.writeFileSync(
  path.join(bin, 'apt-get'),
  `#!/bin/sh
echo "$*" >> "${calls}"
if [ -f "${busy}" ]; then
  left=$(cat "${busy}")
  if [ "$left" != forever ]; then
    if [ "$left" -le 1 ]; then rm "${busy}"; else echo $((left - 1)) > "${busy}"; fi
  fi
  echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process $HOLDER (sleep)" >&2
  echo "E: Unable to lock directory /var/lib/apt/lists/" >&2
  exit 100
fi
`,
  { mode: 0o755 },
);
const holder: ChildProcess = spawn('sleep', ['300'], { stdio: 'ignore' });
afterAll(() => {
  holder.kill();
  fs.rmSync(dir, { recursive: true, force: true });
});

function packagesScript(timeoutSeconds: number) {
  fs.rmSync(calls, { force: true });
  return spawnSync('bash', [path.join(ROOT, 'toolchain', 'packages.sh')], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env['PATH']}`, HOLDER: String(holder.pid), TOOLCHAIN_APT_LOCK_TIMEOUT: String(timeoutSeconds), TOOLCHAIN_APT_LOCK_POLL: '1' },
  });
}
const commandLines = () => fs.readFileSync(calls, 'utf8').trim().split('\n');

describe('toolchain/packages.sh while another process holds apt\'s lock', () => {
  it('waits for it, naming the holder, then updates and installs with apt waiting for the dpkg lock too', () => {
    fs.writeFileSync(busy, '2');
    const result = packagesScript(60);
    expect(result.stderr).toContain(`[toolchain] apt-get update: waiting up to 60 s for apt's lock, held by process ${holder.pid} (sleep 300)`);
    expect(result.status).toBe(0);
    const lines = commandLines();
    expect(lines.slice(0, 3).map((line) => line.replace(/Timeout=\d+/, 'Timeout=<left>'))).toEqual(Array(3).fill('-o DPkg::Lock::Timeout=<left> update -qq'));
    expect(lines).toHaveLength(4);
    expect(lines[3]).toMatch(/^-o DPkg::Lock::Timeout=([1-9]|[1-5][0-9]|60) install -y -qq --no-install-recommends redis-server openssh-server openssh-client git openssl connect-proxy iproute2$/);
  });

  it('gives up after its bound with apt\'s message and the process that holds the lock, and installs nothing', () => {
    fs.writeFileSync(busy, 'forever');
    const result = packagesScript(2);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('E: Could not get lock /var/lib/apt/lists/lock');
    expect(result.stderr).toContain(`[toolchain] apt-get update: another process still holds apt's lock after 2 s: process ${holder.pid} (sleep 300)`);
    expect(commandLines().every((line) => line.endsWith(' update -qq'))).toBe(true);
    expect(commandLines().length).toBeGreaterThanOrEqual(2);
    fs.rmSync(busy, { force: true });
  });
});
