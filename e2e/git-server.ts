import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { E2eError } from '../src/base/errors';
import { freePort, listening } from './loopback';
import { type Supervisor, run, waitFor } from './processes';

/** The parts of an SSH repository URL (`git@host:path.git`, `ssh://git@host[:port]/path.git`). */
export interface SshRepository {
  readonly user: string;
  readonly host: string;
  readonly port: number;
  /** Path as git sends it to the server, without a leading slash. */
  readonly path: string;
}

export function parseSshUrl(url: string): SshRepository {
  const scp = /^([a-z_][a-z0-9_-]*)@([^:/]+):(.+)$/i.exec(url);
  if (scp && !url.startsWith('ssh://')) return { user: scp[1]!, host: scp[2]!, port: 22, path: scp[3]!.replace(/^\/+/, '') };
  const parsed = new URL(url);
  if (parsed.protocol !== 'ssh:') throw new E2eError(`repository URL ${JSON.stringify(url)} is not an SSH URL`);
  return { user: parsed.username, host: parsed.hostname, port: Number(parsed.port || 22), path: parsed.pathname.replace(/^\/+/, '') };
}

/** A git server on loopback serving the checkout's branches over SSH with a deploy key. */
export interface GitServer {
  readonly repository: SshRepository;
  /** Local port of sshd. */
  readonly port: number;
  /** The deploy key's private half (what the repository Secret carries, 5.3). */
  readonly deployKey: string;
  /** `known_hosts` line for the repository's host name. */
  readonly knownHosts: string;
  /** The bare repository on disk. */
  readonly bareRepository: string;
}

function ensureAccount(user: string): void {
  const exists = () => spawnSync('id', ['-u', user]).status === 0;
  if (exists()) return;
  if (process.getuid?.() !== 0) {
    throw new E2eError(`the git server logs in as "${user}" (the repository URL's user), which has no account here; run as root or create it`);
  }
  // A system account without a password or home; sshd's ForceCommand allows git only.
  // Its password field is `*` (no password), not `!` (locked, which sshd refuses).
  // Two runs at once (npm run test:e2e's two files) may both find it missing: the one that
  // lost the race finds it made.
  try {
    run('useradd', ['--system', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/bin/sh', '--password', '*', user]);
  } catch (error) {
    if (!exists()) throw error;
  }
}

/**
 * Serve `source` (the checkout) as the platform's repository: a bare clone holding the
 * checkout's local branches as they are committed, the platform's branch at HEAD (a branch
 * an Application names but the repository lacks fails as it would on the real host), behind sshd on 127.0.0.1 that
 * accepts only the per-run deploy key and only git-upload-pack (read access, 5.3).
 */
export async function startGitServer(options: {
  readonly source: string;
  readonly url: string;
  /** The branch the platform follows: it is served at the checkout's HEAD commit. */
  readonly branch: string;
  readonly dir: string;
  readonly supervisor: Supervisor;
}): Promise<GitServer> {
  const repository = parseSshUrl(options.url);
  ensureAccount(repository.user);
  const dir = options.dir;
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  fs.chmodSync(dir, 0o755);

  const repos = path.join(dir, 'repositories');
  const bareRepository = path.join(repos, repository.path);
  fs.mkdirSync(path.dirname(bareRepository), { recursive: true });
  run('git', ['clone', '--quiet', '--bare', '--no-local', options.source, bareRepository]);
  // What is checked out is what is tested, on a feature branch too: the platform's branch
  // points at the checkout's HEAD commit in the served copy (the checkout is not touched).
  const head = run('git', ['-C', options.source, 'rev-parse', 'HEAD']).trim();
  run('git', ['-C', bareRepository, 'update-ref', `refs/heads/${options.branch}`, head]);
  run('chown', ['-R', `${repository.user}:`, repos]);

  const hostKey = path.join(dir, 'ssh_host_ed25519_key');
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'e2e-git-server', '-f', hostKey]);
  const deployKeyFile = path.join(dir, 'deploy_key');
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'platform-gitops-e2e-deploy-key', '-f', deployKeyFile]);
  const authorizedKeys = path.join(dir, 'authorized_keys');
  fs.writeFileSync(authorizedKeys, `restrict ${fs.readFileSync(`${deployKeyFile}.pub`, 'utf8')}`, { mode: 0o644 });

  // Only git-upload-pack (fetch), relative to the repositories folder.
  const serve = path.join(dir, 'git-serve.sh');
  fs.writeFileSync(
    serve,
    [
      '#!/bin/sh',
      'case "$SSH_ORIGINAL_COMMAND" in',
      "  \"git-upload-pack '\"*) ;;",
      '  *) echo "read-only: only git-upload-pack is served" >&2; exit 1 ;;',
      'esac',
      `cd '${repos}' || exit 1`,
      "exec git-shell -c \"$(printf '%s' \"$SSH_ORIGINAL_COMMAND\" | sed \"s#'/#'#\")\"",
      '',
    ].join('\n'),
    { mode: 0o755 },
  );

  const port = await freePort();
  const config = path.join(dir, 'sshd_config');
  fs.writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorizedKeys}`,
      `AllowUsers ${repository.user}`,
      'AuthenticationMethods publickey',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin no',
      'UsePAM no',
      // The run folder lives under /tmp; sshd's ownership checks would refuse it.
      'StrictModes no',
      'DisableForwarding yes',
      'PermitTTY no',
      `ForceCommand ${serve}`,
      'LogLevel VERBOSE',
      '',
    ].join('\n'),
  );
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  options.supervisor.start({ name: 'sshd', command: '/usr/sbin/sshd', args: ['-D', '-e', '-f', config] });
  await waitFor('sshd to listen', 20_000, () => listening(port), () => options.supervisor.assertRunning());

  const hostPub = fs.readFileSync(`${hostKey}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  const knownHostName = repository.port === 22 ? repository.host : `[${repository.host}]:${repository.port}`;

  return {
    repository,
    port,
    deployKey: fs.readFileSync(deployKeyFile, 'utf8'),
    knownHosts: `${knownHostName} ${hostPub}\n`,
    bareRepository,
  };
}

