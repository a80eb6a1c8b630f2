import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { E2eError } from '../src/base/errors';
import { ARGO_CD_RELEASE } from '../src/infrastructure/argo-cd-release';
import type { KubeObject } from './kube-client';
import { run } from './processes';

/**
 * Argo CD's release manifests as the e2e reads them: from the Go module the toolchain builds
 * Argo CD from (toolchain/argocd/go.mod pins `github.com/argoproj/argo-cd/v3` at
 * ARGO_CD_RELEASE.version; the module proxy's zip of the tag holds the repository's tree,
 * `manifests/` included), never from github.com, which the e2e cannot reach.
 *
 * The platform's kustomization names github.com/argoproj/argo-cd at the tag as its remote
 * base (dist/<environment>/argocd/kustomization.yaml), and kustomize fetches a remote base
 * with git (kustomize api/internal/git/cloner.go: `git fetch --depth=1 origin <ref>`). So the
 * harness keeps a local git repository whose tree is the module's `manifests/`, tagged with
 * the release, and points git at it for that URL (`url.<local>.insteadOf`): the committed
 * kustomization is built unchanged, against the very files of the tag the e2e's Argo CD runs.
 * The repository's commit is the harness's own (the module carries no history); its files are
 * the tag's.
 */

/** The folder of the argo-cd module at the pinned release in the Go module cache, downloaded if missing. */
export function argoCdModuleDir(projectRoot: string): string {
  const module = `${ARGO_CD_RELEASE.module}@${ARGO_CD_RELEASE.version}`;
  // From toolchain/argocd, so the go.mod and go.sum that pin the module check its hash, with
  // the Go release the toolchain builds with (build.sh GO_TOOLCHAIN), which that go.mod needs.
  const goToolchain = /^GO_TOOLCHAIN=(\S+)/m.exec(fs.readFileSync(path.join(projectRoot, 'toolchain', 'build.sh'), 'utf8'))?.[1];
  if (goToolchain === undefined) throw new E2eError('toolchain/build.sh names no GO_TOOLCHAIN');
  const result = spawnSync('go', ['mod', 'download', '-json', module], {
    cwd: path.join(projectRoot, 'toolchain', 'argocd'),
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: goToolchain },
  });
  const dir = result.status === 0 ? (JSON.parse(result.stdout) as { Dir?: string }).Dir : undefined;
  if (dir === undefined || !fs.existsSync(path.join(dir, 'manifests'))) {
    throw new E2eError(`go mod download ${module} (in toolchain/argocd) gave no manifests/ folder: ${(result.stderr || result.error?.message || '').trim()}`);
  }
  return dir;
}

/**
 * A git repository at `<work>/argo-cd` holding the module's `manifests/` at the release's tag,
 * made once per folder. Returns its path.
 */
export function argoCdManifestsRepository(moduleDir: string, work: string): string {
  const repository = path.join(work, 'argo-cd');
  if (fs.existsSync(path.join(repository, '.git'))) return repository;
  fs.mkdirSync(repository, { recursive: true });
  fs.cpSync(path.join(moduleDir, 'manifests'), path.join(repository, 'manifests'), { recursive: true });
  // The module cache's files are read-only; git needs none written, but a later cleanup does.
  run('chmod', ['-R', 'u+w', repository]);
  const git = (...args: string[]) => run('git', ['-C', repository, '-c', 'user.name=platform-gitops e2e', '-c', 'user.email=e2e@platform-gitops.invalid', ...args]);
  git('init', '--quiet');
  git('add', '--all');
  git('commit', '--quiet', '--no-gpg-sign', '-m', `manifests/ of ${ARGO_CD_RELEASE.module}@${ARGO_CD_RELEASE.version}`);
  git('tag', ARGO_CD_RELEASE.version);
  return repository;
}

/** git's configuration that reads the local repository for the upstream URL (`url.<base>.insteadOf`). */
export function gitRedirect(repository: string): { key: string; value: string } {
  return { key: `url.${repository}.insteadOf`, value: ARGO_CD_RELEASE.repoURL };
}

/** The redirect as environment variables of git (GIT_CONFIG_COUNT, git 2.31 and later), for a kustomize run. */
export function gitRedirectEnvironment(repository: string): Record<string, string> {
  const { key, value } = gitRedirect(repository);
  return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: key, GIT_CONFIG_VALUE_0: value };
}

/** The redirect as a `.gitconfig` file, for a process whose HOME is `home` (Argo CD's repository server). */
export function writeGitRedirect(home: string, repository: string): void {
  const { value } = gitRedirect(repository);
  fs.mkdirSync(home, { recursive: true });
  fs.appendFileSync(path.join(home, '.gitconfig'), `[url "${repository}"]\n\tinsteadOf = ${value}\n`);
}

/** `kustomize build <folder>` with the remote base read from the local repository: the objects. */
export function buildArgoCdKustomization(kustomize: string, folder: string, repository: string): KubeObject[] {
  const output = run(kustomize, ['build', folder], { env: gitRedirectEnvironment(repository) });
  return parseAllDocuments(output)
    .map((doc) => doc.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null && object !== undefined);
}
