import * as fs from 'node:fs';
import * as path from 'node:path';
import { VERSION_FILE } from '../src/contract/choices';
import { PORTS } from '../src/contract/contract';
import { parseImageReference } from '../src/contract/naming';
import { type ContractServer, type Fault, startContractServer } from './contract-server';
import type { KubeClient, KubeObject } from './kube-client';

/** The file a test writes into a pod's folder to break one endpoint of its container (a Fault of e2e/contract-server.ts). */
export const FAULT_FILE = 'fault';

/** An application whose pods get a loopback container: its namespace and its container's name. */
export interface LiveApplication {
  readonly namespace: string;
  readonly container: string;
}

interface LiveContainer {
  readonly uid: string;
  readonly dir: string;
  readonly server: ContractServer;
}

/**
 * Every running pod of the applications gets what its container would answer, on loopback,
 * so the live operations run for real against it:
 * - `kubectl exec` runs in a folder of its own (kwok's Exec, `local.workDir`), which holds the
 *   version file the image would hold (VERSION_FILE: `version`, the pod's image tag);
 * - `kubectl port-forward` to 8080 reaches a contract server of its own (kwok's PortForward),
 *   which answers /health, /ready, login and /api/status as the application does.
 * A test breaks one pod's container by writing into its folder: another `version`, or a
 * fault (`fault`: `health-503`). Folders are `<root>/<namespace>/<pod>`; the path is given to
 * `--exec` commands as E2E_CONTAINERS.
 */
export class LiveContainers {
  private readonly containers = new Map<string, LiveContainer>();

  constructor(
    private readonly client: KubeClient,
    /** Where each pod's folder is made. */
    readonly root: string,
    private readonly applications: readonly LiveApplication[],
  ) {}

  /** One pass: map new running pods, forget deleted ones, apply the faults written since. */
  async reconcile(): Promise<void> {
    const live = new Set<string>();
    for (const application of this.applications) {
      for (const pod of await this.client.list('v1', 'Pod', application.namespace)) {
        if (pod.status?.phase !== 'Running' || pod.metadata.deletionTimestamp) continue;
        const id = `${application.namespace}/${pod.metadata.name}`;
        live.add(id);
        const known = this.containers.get(id);
        if (known === undefined || known.uid !== pod.metadata.uid) {
          if (known !== undefined) await known.server.close();
          this.containers.set(id, await this.map(pod, application));
        }
        const container = this.containers.get(id)!;
        const faultFile = path.join(container.dir, FAULT_FILE);
        container.server.fault = fs.existsSync(faultFile) ? (fs.readFileSync(faultFile, 'utf8').trim() as Fault) : 'none';
      }
    }
    for (const [id, container] of this.containers) {
      if (live.has(id)) continue;
      await container.server.close();
      this.containers.delete(id);
    }
  }

  /** Stop every container's server. */
  async close(): Promise<void> {
    for (const container of this.containers.values()) await container.server.close();
    this.containers.clear();
  }

  private async map(pod: KubeObject, application: LiveApplication): Promise<LiveContainer> {
    const namespace = application.namespace;
    const name = pod.metadata.name;
    const dir = path.join(this.root, namespace, name);
    fs.mkdirSync(dir, { recursive: true });
    const image = (pod.spec?.containers ?? []).find((c: { name: string }) => c.name === application.container)?.image ?? '';
    fs.writeFileSync(path.join(dir, VERSION_FILE.name), `${parseImageReference(image).tag ?? ''}\n`);
    const server = await startContractServer();
    const port = Number(new URL(server.baseUrl).port);
    const owner = { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata.uid };
    try {
      await this.expose(namespace, name, owner, application.container, dir, port);
    } catch (error) {
      await server.close();
      throw error;
    }
    return { uid: String(pod.metadata.uid), dir, server };
  }

  /** kwok's Exec and PortForward of one pod: its exec in `dir`, its port-forward to `port`. */
  private async expose(namespace: string, name: string, owner: { kind: string; name: string }, container: string, dir: string, port: number): Promise<void> {
    await this.client.apply({
      apiVersion: 'kwok.x-k8s.io/v1alpha1',
      kind: 'Exec',
      metadata: { name, namespace, ownerReferences: [owner] },
      spec: { execs: [{ containers: [container], local: { workDir: dir } }] },
    });
    await this.client.apply({
      apiVersion: 'kwok.x-k8s.io/v1alpha1',
      kind: 'PortForward',
      metadata: { name, namespace, ownerReferences: [owner] },
      spec: { forwards: [{ ports: [PORTS.application], target: { port, address: '127.0.0.1' } }] },
    });
  }
}
