import { execFile, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { E2eError } from '../src/base/errors';

/**
 * A container of a pod's rendered spec, as far as the harness plays it on this machine:
 * its command, environment, user and read-only root, and its volume mounts.
 */
export interface ContainerSpec {
  readonly name: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly env?: readonly { readonly name: string; readonly value?: string; readonly valueFrom?: unknown }[];
  readonly volumeMounts?: readonly { readonly name: string; readonly mountPath: string; readonly subPath?: string; readonly readOnly?: boolean }[];
  readonly securityContext?: {
    readonly runAsUser?: number;
    readonly runAsGroup?: number;
    readonly readOnlyRootFilesystem?: boolean;
    readonly allowPrivilegeEscalation?: boolean;
    readonly capabilities?: { readonly drop?: readonly string[] };
  };
}

/** What stands on this machine for one volume of the pod. */
export type VolumeSource =
  /** An emptyDir: a fresh tmpfs, writable by anyone (the kubelet makes it 0777). */
  | { readonly kind: 'emptyDir' }
  /** A folder: a Secret's or ConfigMap's keys as files (what the kubelet mounts), or a folder another container fills. */
  | { readonly kind: 'folder'; readonly path: string; readonly keys?: readonly string[]; readonly describe: string };

/** One step of the mount namespace that plays the container, in order. */
export type MountStep =
  /** A tmpfs over a folder of this machine, standing for the image's own folder (what the image has there, this machine does not). */
  | { readonly kind: 'shadow'; readonly target: string }
  /** A folder or file of this machine at a path of the container. */
  | { readonly kind: 'bind'; readonly source: string; readonly target: string; readonly file: boolean; readonly readOnly: boolean }
  /** An emptyDir. */
  | { readonly kind: 'emptyDir'; readonly target: string };

/** How the harness runs a container of a pod as a process of this machine. */
export interface ContainerPlay {
  readonly command: readonly string[];
  /** Only these variables, as the container runtime gives them (PATH, HOME) and the spec adds. */
  readonly env: Readonly<Record<string, string>>;
  readonly user: number;
  readonly group: number;
  readonly readOnlyRoot: boolean;
  readonly noNewPrivileges: boolean;
  readonly dropAllCapabilities: boolean;
  readonly mounts: readonly MountStep[];
}

/**
 * The image's environment a container runtime gives a process (containerd: PATH from the
 * image, HOME from the image's /etc/passwd, `/` for a user it does not name). The images the
 * harness plays (alpine-based) set only PATH, alpine's default.
 */
export const IMAGE_ENVIRONMENT = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/' } as const;

/** The nearest folder of `target` that exists on this machine (`exists`), and the components below it that do not. */
function existingAncestor(target: string, exists: (folder: string) => boolean): string {
  let folder = path.dirname(target);
  while (!exists(folder)) folder = path.dirname(folder);
  return folder;
}

/**
 * How to play `container` of a pod on this machine: its mounts from `volumes` (each volume of
 * the pod by name), `imageFiles` (files of its image the harness stands in for, by path in
 * the image), its user and privileges from its securityContext. `exists` says whether a
 * folder exists on this machine: a mount whose folder does not exist gets a tmpfs over the
 * nearest folder that does (never `/`), as the image has its own folders there.
 * An environment variable that names a file inside a Secret's mount that the Secret does not
 * hold, a volume the pod does not have, or a subPath key its volume does not hold, is an
 * error: on a cluster the container would read nothing.
 */
export function containerPlay(
  container: ContainerSpec,
  volumes: ReadonlyMap<string, VolumeSource>,
  imageFiles: ReadonlyMap<string, string>,
  exists: (folder: string) => boolean,
): ContainerPlay {
  const where = `container ${container.name}`;
  const context = container.securityContext ?? {};
  if (context.runAsUser === undefined) throw new E2eError(`${where}: no runAsUser, so it would run as its image's user, which the harness cannot know`);
  const binds: MountStep[] = [];
  const emptyDirs: MountStep[] = [];
  const targets = [...(container.volumeMounts ?? []).map((mount) => mount.mountPath), ...imageFiles.keys()];
  const under = (folder: string, parent: string) => folder === parent || folder.startsWith(parent === '/' ? '/' : `${parent}/`);
  const needed = [...new Set(targets.filter((target) => !exists(target) || imageFiles.has(target)).map((target) => existingAncestor(target, exists)))].sort();
  const shadows = needed.filter((folder) => !needed.some((other) => other !== folder && under(folder, other)));
  if (shadows.includes('/')) throw new E2eError(`${where}: a mount at ${targets.find((t) => existingAncestor(t, exists) === '/')} needs a folder this machine does not have directly under /, which the harness cannot stand in for`);
  for (const mount of container.volumeMounts ?? []) {
    const volume = volumes.get(mount.name);
    if (volume === undefined) throw new E2eError(`${where} mounts volume ${mount.name} at ${mount.mountPath}, which the pod does not have or the harness does not play (it plays emptyDir, Secret and ConfigMap volumes and the folders it is given)`);
    if (volume.kind === 'emptyDir') {
      emptyDirs.push({ kind: 'emptyDir', target: mount.mountPath });
      continue;
    }
    if (mount.subPath !== undefined && volume.keys !== undefined && !volume.keys.includes(mount.subPath)) {
      throw new E2eError(`${where} mounts key ${mount.subPath} of ${volume.describe} at ${mount.mountPath}, which holds ${volume.keys.join(', ') || 'no key'}`);
    }
    const source = mount.subPath === undefined ? volume.path : path.join(volume.path, mount.subPath);
    // A Secret's or ConfigMap's keys are read-only whatever the mount says (the kubelet has
    // mounted those volumes read-only since Kubernetes 1.9.4, CVE-2017-1002102).
    binds.push({ kind: 'bind', source, target: mount.mountPath, file: mount.subPath !== undefined, readOnly: mount.readOnly === true || volume.keys !== undefined });
  }
  for (const [target, source] of imageFiles) binds.push({ kind: 'bind', source, target, file: true, readOnly: true });
  for (const bind of binds) {
    const hidden = bind.kind === 'bind' ? shadows.find((folder) => under(bind.source, folder)) : undefined;
    if (hidden !== undefined) throw new E2eError(`${where}: the source of its mount at ${bind.target}, ${(bind as { source: string }).source}, lies under ${hidden}, which the harness hides to stand in for the image's own folder`);
  }
  const env: Record<string, string> = { ...IMAGE_ENVIRONMENT };
  for (const variable of container.env ?? []) {
    if (variable.value === undefined) throw new E2eError(`${where}: env ${variable.name} is not a plain value, which the harness does not resolve`);
    env[variable.name] = variable.value;
    const mount = (container.volumeMounts ?? []).find((m) => m.subPath === undefined && variable.value!.startsWith(`${m.mountPath}/`));
    const volume = mount === undefined ? undefined : volumes.get(mount.name);
    if (mount === undefined || volume?.kind !== 'folder' || volume.keys === undefined) continue;
    const key = variable.value.slice(mount.mountPath.length + 1);
    if (!volume.keys.includes(key)) throw new E2eError(`${where}: ${variable.name}=${variable.value} names key ${key} of ${volume.describe}, which holds ${volume.keys.join(', ') || 'no key'}`);
  }
  const command = [...(container.command ?? []), ...(container.args ?? [])];
  if (command.length === 0) throw new E2eError(`${where}: no command, so it would run its image's entrypoint, which the harness cannot know`);
  return {
    command,
    env,
    user: context.runAsUser,
    // containerd: a user the image's /etc/passwd does not name runs with group 0.
    group: context.runAsGroup ?? 0,
    readOnlyRoot: context.readOnlyRootFilesystem === true,
    noNewPrivileges: context.allowPrivilegeEscalation === false,
    dropAllCapabilities: context.capabilities?.drop?.includes('ALL') === true,
    // Binds first (their sources may lie under a folder an emptyDir hides), emptyDirs last.
    mounts: [...shadows.map((target): MountStep => ({ kind: 'shadow', target })), ...binds, ...emptyDirs],
  };
}

/** A word for `sh`, quoted. */
function quoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The `sh` script that plays `play` inside a private mount namespace (`unshare --mount
 * --propagation private`, as root): the mounts and a /dev/shm of its own, then for a
 * read-only root every file system but the kernel's and the container's writable mounts made
 * read-only, then the command as the container's user with only its environment, no
 * capabilities and no new privileges (`setpriv`, util-linux).
 */
export function containerScript(play: ContainerPlay): string {
  const lines = ['set -eu'];
  for (const step of play.mounts) {
    if (step.kind === 'shadow') lines.push(`mount -t tmpfs -o mode=0755 tmpfs ${quoted(step.target)}`);
    if (step.kind === 'emptyDir') lines.push(`mkdir -p ${quoted(step.target)}`, `mount -t tmpfs -o mode=1777 tmpfs ${quoted(step.target)}`);
    if (step.kind === 'bind') {
      lines.push(`mkdir -p ${quoted(step.file ? path.dirname(step.target) : step.target)}`);
      if (step.file) lines.push(`touch ${quoted(step.target)}`);
      lines.push(`mount --bind ${quoted(step.source)} ${quoted(step.target)}`);
      if (step.readOnly) lines.push(`mount -o remount,bind,ro ${quoted(step.target)}`);
    }
  }
  // The container's own /dev/shm, as its runtime gives one (containerd: a tmpfs of 64 MiB).
  lines.push("mount -t tmpfs -o mode=1777,size=64m tmpfs /dev/shm");
  if (play.readOnlyRoot) {
    for (const step of play.mounts) if (step.kind === 'shadow') lines.push(`mount -o remount,ro ${quoted(step.target)}`);
    lines.push('mount -o remount,bind,ro /');
    // Every other file system of this machine too (a container sees none of them writable),
    // but the kernel's (/proc, /sys, /dev) and the container's writable mounts.
    const writable = play.mounts.filter((step) => step.kind === 'emptyDir' || (step.kind === 'bind' && !step.readOnly)).map((step) => quoted(step.target));
    lines.push(`findmnt -lno TARGET | while IFS= read -r target; do case $target in /|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*${writable.map((target) => `|${target}`).join('')}) ;; *) mount -o remount,bind,ro "$target" ;; esac; done`);
  }
  const privileges = [
    `--reuid=${play.user}`,
    `--regid=${play.group}`,
    '--clear-groups',
    ...(play.dropAllCapabilities ? ['--inh-caps=-all', '--bounding-set=-all'] : []),
    ...(play.noNewPrivileges ? ['--no-new-privs'] : []),
  ];
  const env = Object.entries(play.env).map(([name, value]) => quoted(`${name}=${value}`));
  lines.push(['exec setpriv', ...privileges, 'env -i', ...env, ...play.command.map(quoted)].join(' '));
  return `${lines.join('\n')}\n`;
}

/**
 * Runs `play` once to its end (a step of a pod, not a server), in a private mount namespace and
 * a PID namespace of its own (needs root, as the e2e does), so that past `timeoutMs` every
 * process it started is killed with it: its exit code and what it printed, stdout then
 * stderr; 1 and why when it ran past `timeoutMs` or could not start. What it was run with
 * (its environment is on the script's command line) is never part of the output.
 */
export function runContainer(play: ContainerPlay, timeoutMs: number): Promise<{ exitCode: number; output: string }> {
  // --fork: unshare's child is the PID namespace's first process, and when it dies the kernel
  // kills every other one there. Killing unshare alone would not do (--kill-child's signal is
  // cleared when setpriv changes the user), so past the time that child is killed first.
  const namespaces = ['--mount', '--propagation', 'private', '--pid', '--fork', '--mount-proc'];
  return new Promise((resolve) => {
    let timedOut = false;
    const unshare = execFile('unshare', [...namespaces, '--', 'sh', '-c', containerScript(play)], { encoding: 'utf8' }, (error, stdout, stderr) => {
      clearTimeout(timer);
      const printed = `${stdout}${stderr}`.trim();
      // unshare's own complaint about its killed child is not the step's output: a whole line,
      // or only `unshare:` when the kill came while it was writing (seen on a loaded machine).
      if (timedOut) resolve({ exitCode: 1, output: `${printed.split('\n').filter((line) => !/^unshare:( |$)/.test(line)).join('\n')}\n(killed: it ran past ${timeoutMs} ms)`.trim() });
      else if (error === null) resolve({ exitCode: 0, output: printed });
      else if (typeof error.code === 'number') resolve({ exitCode: error.code, output: printed });
      else resolve({ exitCode: 1, output: `unshare could not start (${String(error.code ?? error.signal)}): util-linux is needed, and root` });
    });
    const timer = setTimeout(() => {
      timedOut = true;
      if (unshare.pid !== undefined) spawnSync('pkill', ['-KILL', '-P', String(unshare.pid)]);
      unshare.kill('SIGKILL');
    }, timeoutMs);
  });
}
