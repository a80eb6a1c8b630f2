// What the scenarios that `npm run e2e -- --exec` runs on a converged cluster share
// (registry-scenario.mjs, canary-scenario.mjs, ops-scenario.mjs): their steps, each recorded
// with the exit code it was expected to give and gave; the project's commands run in a
// checkout; the next patch of a tag; and git, to commit in the served checkout and push to the
// repository Argo CD reads.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

/**
 * Seconds since this was called, to a tenth, each time the returned function is called: when a
 * scenario's step ended, from the scenario's start, which shows where its time goes.
 */
export function stopwatch() {
  const started = Date.now();
  return () => Math.round((Date.now() - started) / 100) / 10;
}

/** The steps of one scenario: `record` each, then `finish` writes them (and `extra`) and exits 1 if one was not as expected. */
export function scenarioSteps() {
  const steps = [];
  const elapsed = stopwatch();
  let failed = 0;
  const record = (name, ok, output, expected = 0, exitCode = ok ? 0 : 1) => {
    const seconds = elapsed();
    steps.push({ name, expected, exitCode, output: String(output ?? ''), stdout: '', seconds });
    console.log(`--- ${name}: ${ok ? 'as expected' : 'NOT as expected'} (at ${seconds} s)${output ? `\n${String(output).replace(/^/gm, '  | ')}` : ''}`);
    if (!ok) failed++;
  };
  /** A command of the project (`node scripts/run.cjs <args>`) in `cwd`: its exit code and output, recorded as a step. */
  const project = (name, args, cwd, expected = 0) => {
    const result = spawnSync(process.execPath, ['scripts/run.cjs', ...args], { cwd, encoding: 'utf8', env: process.env });
    const output = `${result.stdout}${result.stderr}`;
    record(`${name}: ${args.join(' ')}`, result.status === expected, output.split('\n').slice(-25).join('\n'), expected, result.status);
    return output;
  };
  const finish = (file, extra) => {
    fs.writeFileSync(file, JSON.stringify({ ...extra, steps }, null, 2));
    process.exit(failed === 0 ? 0 : 1);
  };
  return { record, project, finish };
}

/** The tag of the next patch release after `tag` (`v1.2.3` -> `v1.2.4`). */
export function nextPatch(tag) {
  const [major, minor, patch] = tag.slice(1).split('.').map(Number);
  return `v${major}.${minor}.${patch + 1}`;
}

/** Let the project's commands run in the served checkout `source`: its node_modules are this checkout's (the e2e's working directory). */
export function linkNodeModules(source) {
  if (!fs.existsSync(path.join(source, 'node_modules'))) fs.symlinkSync(path.join(process.cwd(), 'node_modules'), path.join(source, 'node_modules'), 'dir');
}

/** Make application `app` of environment `env` blue-green in the checkout at `root` (its tag blue, the next patch green), render it and commit. */
export function makeBlueGreen(root, env, app) {
  const { parseDocument } = createRequire(path.join(process.cwd(), 'package.json'))('yaml');
  const file = path.join(root, 'src', 'environments', env, `${app}.yaml`);
  const doc = parseDocument(fs.readFileSync(file, 'utf8'));
  const tag = String(doc.getIn(['image', 'tag']));
  doc.delete('replicas');
  doc.deleteIn(['image', 'tag']);
  doc.set('strategy', doc.createNode({ type: 'blue-green', blueGreen: { active: 'blue', units: { blue: { tag }, green: { tag: nextPatch(tag) } } } }));
  fs.writeFileSync(file, doc.toString());
  const synth = spawnSync(process.execPath, ['scripts/run.cjs', 'synth'], { cwd: root, encoding: 'utf8' });
  if (synth.status !== 0) throw new Error(`synth of ${root} with ${app} blue-green failed: ${synth.stdout}${synth.stderr}`);
  git(root, 'add', '-A');
  git(root, 'commit', '--quiet', '-m', `${env}: ${app} blue-green`);
}

export function git(cwd, ...args) {
  const result = spawnSync('git', ['-c', 'user.name=e2e release', '-c', 'user.email=e2e@example.invalid', ...args], { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
}

/**
 * Push the served checkout's HEAD to the bare repository the git server serves, the branch
 * Argo CD follows. The bare repository belongs to the git server's account, and git refuses
 * another owner's repository unless named safe: its receive-pack is told so on its own command
 * line (a local push clears GIT_CONFIG_PARAMETERS for it, so `git -c` on the push would not reach it).
 */
export function pushServed(source) {
  const bare = process.env.E2E_GIT_REPOSITORY;
  git(source, 'push', '--quiet', `--receive-pack=git -c safe.directory=${bare} receive-pack`, bare, `HEAD:refs/heads/${process.env.E2E_GIT_BRANCH}`);
}

/**
 * What Argo CD's git webhook does for a commit pushed to the branch the run serves: every
 * Application with a source of that repository at that branch is asked to refresh
 * (`argocd.argoproj.io/refresh: normal`; v3.6.1 util/webhook/webhook.go `HandleEvent`, through
 * `sourceRevisionHasChanged` and `sourceUsesURL`, with no `manifest-generate-paths` annotation to
 * narrow it, then `argo.RefreshApp`), and a requested refresh resolves the branch again (v3.6.1
 * controller/appcontroller.go `needRefreshAppStatus`: CompareWithLatestForceResolve). Without
 * it an Application sees the commit only at its periodic refresh (`--app-resync`, e2e/argocd.ts),
 * and that reads the branch's commit from the repo server's revision cache, which keeps it for
 * 3 minutes (`--revision-cache-expiration`, reposerver/cache/cache.go). The repository is the
 * root Application's. `objects` is a KubernetesObjectApi of @kubernetes/client-node, `k8s` the
 * library.
 */
export async function gitWebhook(objects, k8s) {
  const namespace = 'argocd';
  const branch = process.env.E2E_GIT_BRANCH;
  const root = await objects.read({ apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'root', namespace } });
  const repository = root.spec.source.repoURL;
  const listed = await objects.list('argoproj.io/v1alpha1', 'Application', namespace);
  const pushedTo = (source) => source?.repoURL === repository && [branch, 'HEAD', ''].includes(String(source.targetRevision ?? '').replace(/^refs\/heads\//, ''));
  for (const app of listed.items) {
    if (![app.spec?.source, ...(app.spec?.sources ?? [])].some(pushedTo)) continue;
    await objects
      .patch(
        { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: app.metadata.name, namespace, annotations: { 'argocd.argoproj.io/refresh': 'normal' } } },
        undefined, undefined, 'e2e-person', undefined, k8s.PatchStrategy.MergePatch,
      )
      // An Application deleted meanwhile (a pruned one) needs no refresh.
      .catch(() => undefined);
  }
}
