import { describe, expect, it } from 'vitest';
import { ClusterConnection } from '../src/cluster/connection';
import { fakeApiServerForTests } from './fake-api-server';

describe('the cluster connection', () => {
  const { api, kubeconfig } = fakeApiServerForTests('platform-gitops-connection-');

  it("keeps one connection for a verb's requests one after another, as client-go keeps its transport", async () => {
    api.objects = { Pod: [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'webapp-0', namespace: 'webapp' } }] };
    const connection = new ClusterConnection({ kubeconfig: kubeconfig() });
    const before = api.connections;
    for (let request = 0; request < 5; request++) expect((await connection.get('v1', 'Pod', 'webapp-0', 'webapp'))?.metadata.name).toBe('webapp-0');
    expect(await connection.list('v1', 'Pod', 'webapp')).toHaveLength(1);
    expect(api.connections - before).toBe(1);
  });

  it('opens one per connection object: another kubeconfig or context may name another server or identity', async () => {
    const before = api.connections;
    for (const connection of [new ClusterConnection({ kubeconfig: kubeconfig() }), new ClusterConnection({ kubeconfig: kubeconfig() })]) {
      await connection.list('v1', 'Pod', 'webapp');
    }
    expect(api.connections - before).toBe(2);
  });
});
