import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import type { Toolchain } from '../toolchain';
import { E2eError } from '../src/base/errors';
import { freePort } from './loopback';
import type { KeyPair } from './pki';
import type { Supervisor } from './processes';

/** A real OCI registry on loopback, over TLS: where the run publishes the environment's application charts. */
export interface ChartRegistry {
  readonly port: number;
  /** `oci://127.0.0.1:<port>`: the registry as the run's own publishing reaches it. */
  readonly loopback: string;
}

/**
 * The CNCF distribution registry (github.com/distribution/distribution/v3, the toolchain's
 * `distribution`) serving on 127.0.0.1 over TLS with `tls` (a certificate for the registry's
 * public host, which the loopback proxy sends here, and for 127.0.0.1, where publishing
 * pushes), anonymous, storing in the run folder. Waits until `/v2/` answers.
 */
export async function startChartRegistry(options: { toolchain: Pick<Toolchain, 'bin'>; supervisor: Supervisor; dir: string; tls: KeyPair; ca: string }): Promise<ChartRegistry> {
  const { dir, tls } = options;
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const config = path.join(dir, 'registry.yml');
  fs.writeFileSync(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: info',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${path.join(dir, 'storage')}`,
      'http:',
      `  addr: 127.0.0.1:${port}`,
      '  tls:',
      `    certificate: ${tls.cert}`,
      `    key: ${tls.key}`,
      '',
    ].join('\n'),
  );
  // No OpenTelemetry export: there is no collector on loopback (distribution v3 exports traces by default).
  options.supervisor.start({ name: 'chart-registry', command: options.toolchain.bin('distribution', 'registry'), args: ['serve', config], env: { OTEL_TRACES_EXPORTER: 'none' } });
  const ca = fs.readFileSync(options.ca);
  const answers = (): Promise<boolean> =>
    new Promise((resolve) => {
      const request = https.get({ host: '127.0.0.1', port, path: '/v2/', ca, timeout: 2_000 }, (response) => {
        response.resume();
        resolve(response.statusCode === 200);
      });
      request.on('error', () => resolve(false));
      request.on('timeout', () => request.destroy());
    });
  for (let attempt = 0; attempt < 150; attempt++) {
    options.supervisor.assertRunning();
    if (await answers()) return { port, loopback: `oci://127.0.0.1:${port}` };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new E2eError(`the chart registry on 127.0.0.1:${port} did not answer /v2/ within 30 s (its log: ${options.supervisor.logDir}/chart-registry.log)`);
}
