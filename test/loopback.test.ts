import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ephemeralRange, freePort, LISTEN_PORTS_FROM } from '../e2e/loopback';

describe('the e2e servers\' ports (e2e/loopback.ts)', () => {
  // A port from the kernel's ephemeral range may be taken by any outbound connection between
  // the pick and the server's bind ("bind: address already in use", seen on argocd-repo-server).
  it('hands out ports below the kernel\'s ephemeral range, from LISTEN_PORTS_FROM, never one twice', async () => {
    const [first] = ephemeralRange();
    const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(LISTEN_PORTS_FROM);
      expect(port).toBeLessThan(first);
    }
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('reads the range the kernel gives, and refuses one that leaves too few ports below it, naming the setting', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'port-range-'));
    try {
      const file = path.join(dir, 'ip_local_port_range');
      fs.writeFileSync(file, '20500\t60999\n');
      expect(ephemeralRange(file)).toEqual([20500, 60999]);
      expect(ephemeralRange(path.join(dir, 'missing'))).toEqual([49152, 65535]);
      await expect(freePort(ephemeralRange(file))).rejects.toThrow(/ephemeral port range 20500-60999 .*net\.ipv4\.ip_local_port_range/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
