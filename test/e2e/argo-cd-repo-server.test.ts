import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { argoCdEnvironment } from '../../e2e/argocd';
import { freePort, listening } from '../../e2e/loopback';
import { Supervisor, waitFor } from '../../e2e/processes';
import { locateToolchain } from '../../toolchain';
import { ROOT, temporaryDirectory } from '../support';

// The real argocd-repo-server (toolchain) clones into os.TempDir()/_argocd-repo and adopts at
// its start every clone found there by its remote's URL (v3.6.1 reposerver/server.go,
// reposerver/repository/repository.go Init). Every e2e run serves the same URL, so two runs at
// once shared one clone while that folder was the machine's /tmp.
describe("each e2e run's Argo CD keeps its clones in the run's folder", () => {
  it('starts the repository server with a TMPDIR of the run, where it makes its clones\' folder', async () => {
    const dir = temporaryDirectory('platform-gitops-repo-server-');
    const environment = argoCdEnvironment(dir, path.join(dir, 'kubeconfig'));
    for (const folder of [environment.ARGOCD_SSH_DATA_PATH, environment.ARGOCD_TLS_DATA_PATH, environment.HOME, environment.TMPDIR]) expect(folder.startsWith(`${dir}${path.sep}`)).toBe(true);
    for (const folder of [environment.HOME, environment.TMPDIR]) fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    const supervisor = new Supervisor(path.join(dir, 'logs'), dir);
    try {
      const port = await freePort();
      supervisor.start({
        name: 'argocd-repo-server',
        command: locateToolchain(ROOT).bin('argocd', 'argocd-repo-server'),
        args: ['--address=127.0.0.1', `--port=${port}`, `--metrics-port=${await freePort()}`, '--disable-tls', '--client-ca-path=', `--redis=127.0.0.1:${await freePort()}`],
        env: environment,
      });
      await waitFor('argocd-repo-server to listen', 60_000, () => listening(port), () => supervisor.assertRunning());
      expect(fs.statSync(path.join(environment.TMPDIR, '_argocd-repo')).isDirectory()).toBe(true);
    } finally {
      await supervisor.stopAll();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
