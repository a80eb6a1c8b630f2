import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SECRETS } from '../src/commands/secrets';
import { loadEnvironments } from '../src/environments';
import { readValuesTexts } from '../src/environments/values-file';
import { catalogByFile, shapeProblems } from '../src/secrets/shape';
import { initEnvironment } from '../src/secrets/init';
import { projectFiles, scanForPlaintextSecrets } from '../src/secrets/scan';
import { ROOT, runInProcess, temporaryDirectory } from './support';

// Issue 50, items 1 and 2: an encrypted file is exactly one Secret of the catalog. What an
// attacker without any private key can write: the committed encrypted files edited as text
// (encrypted_regex leaves all but the values readable, and sops' MAC covers values only).

const CHAT = 'secrets/local/monitoring/chat-webhook.sops.yaml';
const ADMIN = 'secrets/local/database/database-admin.sops.yaml';
const SMOKE = 'secrets/local/webapp/webapp-smoke.sops.yaml';

let dir: string;
beforeEach(() => {
  dir = temporaryDirectory();
  fs.cpSync(path.join(ROOT, 'secrets'), path.join(dir, 'secrets'), { recursive: true });
  fs.cpSync(path.join(ROOT, '.sops.yaml'), path.join(dir, '.sops.yaml'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const committed = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const write = (file: string, text: string) => fs.writeFileSync(path.join(dir, file), text);

/** The committed chat-webhook file turned into a ClusterRoleBinding to cluster-admin, its sops metadata kept. */
function clusterRoleBinding(): string {
  const text = committed(CHAT);
  const sops = text.slice(text.indexOf('\nsops:') + 1);
  const value = /url: (ENC\[[^\]]*\])/.exec(text)![1];
  return [
    'apiVersion: rbac.authorization.k8s.io/v1',
    'kind: ClusterRoleBinding',
    'metadata:',
    '    name: chat-webhook',
    'roleRef:',
    '    apiGroup: rbac.authorization.k8s.io',
    '    kind: ClusterRole',
    '    name: cluster-admin',
    'subjects:',
    '    - kind: ServiceAccount',
    '      name: default',
    '      namespace: monitoring',
    'stringData:',
    `    url: ${value}`,
    sops,
  ].join('\n');
}

async function check() {
  return runInProcess(SECRETS, ['check', '--root', dir]);
}

describe('an encrypted file is exactly one Secret of the catalog, checked without any key', () => {
  it('passes every committed encrypted file as it is', () => {
    const catalog = catalogByFile(loadEnvironments(readValuesTexts(ROOT)));
    const present = [...catalog].filter(([file]) => fs.existsSync(path.join(ROOT, file)));
    expect(present.length).toBeGreaterThan(0);
    for (const [file, secret] of present) expect(shapeProblems(parse(committed(file)), secret), file).toEqual([]);
  });

  it('refuses a ClusterRoleBinding saved as an encrypted Secret (check), naming the file and each rule', async () => {
    write(CHAT, clusterRoleBinding());
    const checked = await check();
    expect(checked.status).toBe(1);
    expect(checked.stderr).toContain(`${CHAT}: apiVersion is "rbac.authorization.k8s.io/v1", expected "v1"`);
    expect(checked.stderr).toContain(`${CHAT}: kind is "ClusterRoleBinding", expected "Secret"`);
    expect(checked.stderr).toContain(`${CHAT}: roleRef is not allowed`);
    expect(checked.stderr).toContain(`${CHAT}: subjects is not allowed`);
  });

  it('refuses the administrator Secret with namespace renamed to generateName, copied over another group\'s file', async () => {
    write(SMOKE, committed(ADMIN).replace('\n    namespace:', '\n    generateName:'));
    const checked = await check();
    expect(checked.status).toBe(1);
    expect(checked.stderr).toContain(`${SMOKE}: metadata.generateName is not allowed`);
    expect(checked.stderr).toContain(`${SMOKE}: metadata.namespace is missing`);
    expect(checked.stderr).toContain(`${SMOKE}: metadata.name is "database-admin", expected "webapp-smoke"`);
  });

  it('refuses a renamed key under stringData, and one in another namespace', async () => {
    write(CHAT, committed(CHAT).replace('\n    url:', '\n    address:').replace('namespace: monitoring', 'namespace: argocd'));
    const checked = await check();
    expect(checked.status).toBe(1);
    expect(checked.stderr).toContain(`${CHAT}: stringData holds address, not a key of the catalog's Secret chat-webhook (url)`);
    expect(checked.stderr).toContain(`${CHAT}: stringData lacks url`);
    expect(checked.stderr).toContain(`${CHAT}: metadata.namespace is "argocd", expected "monitoring"`);
  });

  it('refuses the same in the scan, which reads every file git would commit', async () => {
    write(CHAT, clusterRoleBinding());
    const scanned = await runInProcess(SECRETS, ['scan', '--root', dir]);
    expect(scanned.status).toBe(1);
    expect(scanned.stderr).toContain(`${CHAT}: kind is "ClusterRoleBinding", expected "Secret"`);
    const findings = scanForPlaintextSecrets(projectFiles(dir), catalogByFile(loadEnvironments(readValuesTexts(ROOT))));
    expect(findings.filter((finding) => finding.file === CHAT).map((finding) => finding.problem)).toContain('subjects is not allowed (the catalog\'s Secret has no such field)');
  });
});

describe('symbolic links under secrets/ (issue 50, item 5)', () => {
  it('are refused by check and scan, naming the link', async () => {
    const target = path.join(dir, 'elsewhere.yaml');
    fs.writeFileSync(target, committed(CHAT));
    fs.rmSync(path.join(dir, CHAT));
    fs.symlinkSync(target, path.join(dir, CHAT));
    const checked = await check();
    expect(checked.status).toBe(1);
    expect(checked.stderr).toContain(`${CHAT}: is a symbolic link`);
    const scanned = await runInProcess(SECRETS, ['scan', '--root', dir]);
    expect(scanned.status).toBe(1);
    expect(scanned.stderr).toContain(`${CHAT}: is a symbolic link`);
  });

  it('are refused by init before anything is written: it would write through the link to its target', () => {
    const target = path.join(dir, 'elsewhere');
    fs.renameSync(path.join(dir, 'secrets/local/monitoring'), target);
    fs.symlinkSync(target, path.join(dir, 'secrets/local/monitoring'));
    const environment = loadEnvironments(readValuesTexts(ROOT)).find((candidate) => candidate.name === 'local')!;
    const tools = { sops: '/nonexistent/sops', ageKeygen: '/nonexistent/age-keygen' };
    expect(() => initEnvironment({ root: dir, environment, keyFile: path.join(dir, '..', 'absent.key'), tools })).toThrow('secrets/local/monitoring: is a symbolic link');
  });
});

describe('file names under secrets/ (issue 50, item 5)', () => {
  it('are refused by check when no catalog file has such a name: a space, a line break', async () => {
    fs.copyFileSync(path.join(dir, CHAT), path.join(dir, 'secrets/local/monitoring/chat webhook.sops.yaml'));
    fs.copyFileSync(path.join(dir, CHAT), path.join(dir, 'secrets/local/monitoring/on-call\nwebhook.sops.yaml'));
    const checked = await check();
    expect(checked.status).toBe(1);
    expect(checked.stderr).toContain('  - "secrets/local/monitoring/chat webhook.sops.yaml"\n');
    expect(checked.stderr).toContain('  - "secrets/local/monitoring/on-call\\nwebhook.sops.yaml"\n');
  });
});
