import * as net from 'node:net';
import { describe, expect, it } from 'vitest';
import { OPS } from '../src/commands/ops';
import { lagLine } from '../src/commands/ops/consumer-lag';
import { consumerLag, type LagAdmin } from '../src/cluster/consumer-lag';
import { ROOT, runInProcess } from './support';

// Contract 7 (broker problems): consumer lag per group, topic and partition, as
// kafka-consumer-groups.sh --describe --all-groups shows it. The admin client's three
// requests (ListGroups, OffsetFetch, ListOffsets) are played by a stand-in: their answers are
// kafkajs 2.2.4's (types/index.d.ts: Admin.listGroups, fetchOffsets, fetchTopicOffsets; an
// offset of -1 is a partition the group committed nothing on).

/** A broker holding `ends` (topic -> log end offset per partition) and `committed` (group -> topic -> offset per partition). */
function broker(ends: Record<string, number[]>, committed: Record<string, Record<string, number[]>>): LagAdmin {
  return {
    listGroups: async () => ({ groups: Object.keys(committed).reverse().map((groupId) => ({ groupId, protocolType: 'consumer' })) }),
    fetchOffsets: async ({ groupId }: { groupId: string }) =>
      Object.entries(committed[groupId]!).map(([topic, offsets]) => ({ topic, partitions: offsets.map((offset, partition) => ({ partition, offset: String(offset), metadata: null })) })),
    fetchTopicOffsets: async (topic: string) => ends[topic]!.map((high, partition) => ({ partition, offset: String(high), high: String(high), low: '0' })),
  } as unknown as LagAdmin;
}

describe('consumer lag through the broker', () => {
  it('lists every group, topic and partition with its committed offset, end offset and lag, sorted', async () => {
    const lags = await consumerLag(broker({ declarations: [10, 5, 0] }, { webapp: { declarations: [7, 5, -1] }, billing: { declarations: [10, 0, -1] } }));
    expect(lags.map(lagLine)).toEqual([
      'billing  declarations  0  committed 10  end 10  lag 0',
      'billing  declarations  1  committed 0  end 5  lag 5',
      'billing  declarations  2  committed -  end 0  lag -',
      'webapp  declarations  0  committed 7  end 10  lag 3',
      'webapp  declarations  1  committed 5  end 5  lag 0',
      'webapp  declarations  2  committed -  end 0  lag -',
    ]);
  });

  it('has nothing to list when no group committed an offset', async () => {
    expect(await consumerLag(broker({}, {}))).toEqual([]);
  });

  it('says, within its bound, that a broker that does not answer could not be read (exit 1)', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const started = Date.now();
    const run = await runInProcess(OPS, ['check', '--env', 'local', '--component', 'broker', '--lag'], ROOT, { KAFKA_BOOTSTRAP_SERVERS: `127.0.0.1:${port}`, KAFKA_USERNAME: '', KAFKA_PASSWORD: '' });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(`FAIL consumer lag: the broker at 127.0.0.1:${port} could not be read: `);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('refuses --lag with another component, and half the broker credentials (exit 2)', async () => {
    const other = await runInProcess(OPS, ['check', '--env', 'local', '--component', 'database', '--lag'], ROOT, {});
    expect(other.status).toBe(2);
    expect(other.stderr).toContain('--lag goes with --component broker');
    const half = await runInProcess(OPS, ['check', '--env', 'local', '--component', 'broker', '--lag'], ROOT, { KAFKA_USERNAME: 'ops', KAFKA_PASSWORD: '' });
    expect(half.status).toBe(2);
    expect(half.stderr).toContain('KAFKA_USERNAME and KAFKA_PASSWORD must be set together');
  });
});
