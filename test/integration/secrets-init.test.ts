import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART_WAVES } from '../../src/contract/choices';
import { SYNC_WAVE_ANNOTATION } from '../../src/contract/upstream';
import { encryptedFileName, secretsPath } from '../../src/contract/layout';
import { brokerClientSecret, brokerUserSecret, databaseLoginSecret, databaseSecret, smokeName } from '../../src/contract/naming';
import { ANONYMOUS_DOCKER_CONFIG, LOCAL_WEBHOOK_SINK, applicationBrokerUser, secretCatalog, secretValues } from '../../src/secrets/catalog';
import { recipientOf, recipientsOf } from '../../src/secrets/init';
import { projectFiles, scanForPlaintextSecrets } from '../../src/secrets/scan';
import { generateKey, publicKeyOf } from '../../src/secrets/sops';
import { PASSWORD, generatePassword, meetsPasswordPolicy, variableName } from '../../src/secrets/values';
import { SECRETS } from '../../src/commands/secrets';
import { ROOT, runCli, runInProcess, treeContents } from '../support';
import { local, localApp, testing, repositoryCopy, tools, keys, decrypt, fileOf, init, useSecretsWork } from './secrets-work';

useSecretsWork();

describe('generated values', () => {
  it('are 32 characters of the URL-unreserved alphabet with every kind SQL Server\'s policy counts', () => {
    const passwords = Array.from({ length: 300 }, () => generatePassword());
    expect(new Set(passwords).size).toBe(passwords.length);
    for (const password of passwords) {
      expect(password).toHaveLength(PASSWORD.length);
      expect(password).toMatch(/^[A-Za-z0-9\-._~]+$/);
      expect(meetsPasswordPolicy(password), password).toBe(true);
      // Safe inside a URL, a connection string and a T-SQL literal without quoting.
      expect(encodeURIComponent(password)).toBe(password);
      expect(password).not.toMatch(/[;'"{}=\s]/);
    }
  });

  it('draws without bias: bytes above the largest multiple of the alphabet are drawn again', () => {
    // 255 is above 198 (3 x 66) and must be skipped, never folded onto the alphabet's start.
    let call = 0;
    const bytes = (size: number) => Buffer.from(Array.from({ length: size }, (_, index) => (call++ === 0 && index % 2 === 0 ? 255 : [0, 26, 52, 62][index % 4]!)));
    const password = generatePassword(bytes);
    expect(meetsPasswordPolicy(password)).toBe(true);
    expect(password).toMatch(/^[Aa0-]+$/);
  });

  it('names each value people supply by an environment variable derived from its Secret and key', () => {
    expect(variableName('chat-webhook.url')).toBe('PLATFORM_GITOPS_CHAT_WEBHOOK_URL');
    expect(variableName('registry-pull..dockerconfigjson')).toBe('PLATFORM_GITOPS_REGISTRY_PULL_DOCKERCONFIGJSON');
    const supplied = secretValues(testing).filter((spec) => spec.source === 'supplied');
    expect(supplied.length).toBeGreaterThan(0);
    for (const spec of supplied) expect(spec.default, spec.id).toBeUndefined();
    for (const spec of secretValues(local).filter((candidate) => candidate.source === 'supplied')) expect(spec.default, spec.id).toBeDefined();
  });
});

describe('npm run secrets -- init local', () => {
  let root = '';
  let keyFile = '';
  let firstRun: ReturnType<typeof init>;

  beforeAll(() => {
    root = repositoryCopy();
    keyFile = path.join(keys, 'local', 'local.key');
    firstRun = init({ root, keyFile });
  }, 120_000);
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('creates the key pair outside the repository, 0600 in a 0700 folder, and writes its public key into .sops.yaml only', () => {
    expect(firstRun.keyCreated).toBe(true);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(keyFile)).mode & 0o777).toBe(0o700);
    expect(recipientOf(root, 'local')).toBe(publicKeyOf(tools, keyFile));
    const before = fs.readFileSync(path.join(ROOT, '.sops.yaml'), 'utf8').split('\n');
    const after = fs.readFileSync(path.join(root, '.sops.yaml'), 'utf8').split('\n');
    // Comments and the other rules survive: at most the local rule's age line differs.
    const changed = after.filter((line, index) => line !== before[index]);
    expect(after).toHaveLength(before.length);
    for (const line of changed) expect(line).toBe(`    age: ${firstRun.publicKey}`);
    for (const environment of ['testing', 'staging', 'production']) expect(recipientOf(root, environment)).toBe(recipientOf(ROOT, environment));
  });

  it('writes every Secret of the catalog as a full manifest real sops decrypts with the key, synced before the migrations', () => {
    expect(firstRun.missing).toEqual([]);
    for (const secret of secretCatalog(local)) {
      // Each application has its own pull secret of the same name: the group tells them apart.
      const file = `${secretsPath(local.name, secret.group)}/${encryptedFileName(secret.name)}`;
      expect(recipientsOf(root, file), file).toEqual([firstRun.publicKey]);
      const { status, manifest, stderr } = decrypt(root, file, keyFile);
      expect(status, stderr).toBe(0);
      expect(manifest).toMatchObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: secret.name, namespace: secret.namespace }, type: secret.type });
      expect(manifest.metadata.annotations[SYNC_WAVE_ANNOTATION]).toBe(String(CHART_WAVES.secrets));
      expect(CHART_WAVES.secrets).toBeLessThan(CHART_WAVES.migrations);
      expect(Object.keys(manifest.stringData)).toEqual(Object.keys(secret.keys));
      for (const value of Object.values(manifest.stringData)) expect(value, file).not.toBe('');
      // Only stringData is encrypted: names and types stay readable in git.
      const raw = parse(fs.readFileSync(path.join(root, file), 'utf8'));
      expect(raw.metadata.name).toBe(secret.name);
      for (const value of Object.values(raw.stringData)) expect(String(value)).toMatch(/^ENC\[AES256_GCM,data:/);
    }
  });

  it('holds each password once: the same value wherever two Secrets carry it', () => {
    const read = (secret: string) => decrypt(root, fileOf(local, secret), keyFile).manifest.stringData;
    const user = applicationBrokerUser(localApp());
    const brokerSide = read(brokerUserSecret(user)).password;
    const login = read(databaseLoginSecret(localApp().name));
    const smoke = read(smokeName(localApp().name));
    const client = read(brokerClientSecret(localApp().name));
    expect(meetsPasswordPolicy(brokerSide)).toBe(true);
    expect(meetsPasswordPolicy(login.password)).toBe(true);
    expect(meetsPasswordPolicy(read('database-admin').password)).toBe(true);
    expect(client).toEqual({ username: user, password: brokerSide });
    expect(smoke.KAFKA_USERNAME).toBe(user);
    expect(smoke.KAFKA_PASSWORD).toBe(brokerSide);
    expect(login.username).toBe(localApp().name);
    expect(smoke.DATABASE_USER).toBe(login.username);
    expect(smoke.DATABASE_PASSWORD).toBe(login.password);
    expect(meetsPasswordPolicy(smoke.SMOKE_PASSWORD)).toBe(true);
    const connection = read(databaseSecret(localApp().name))['connection-string'];
    expect(connection).toContain(`;User ID=${login.username};Password=${login.password};`);
    expect(connection).toContain(`;Database=${localApp().database.name};`);
    expect(connection).toMatch(/,1433;/);
    expect(new Set([brokerSide, login.password, read('database-admin').password, smoke.SMOKE_PASSWORD]).size).toBe(4);
  });

  it('gives local safe defaults for what only people have: anonymous pulls and webhooks to the documented sink', () => {
    const read = (secret: string) => decrypt(root, fileOf(local, secret), keyFile).manifest.stringData;
    expect(read(localApp().image.pullSecret)['.dockerconfigjson']).toBe(ANONYMOUS_DOCKER_CONFIG);
    expect(JSON.parse(ANONYMOUS_DOCKER_CONFIG)).toEqual({ auths: {} });
    expect(read('chat-webhook').url.startsWith(`${LOCAL_WEBHOOK_SINK}/`)).toBe(true);
    expect(read('on-call-webhook').url.startsWith(`${LOCAL_WEBHOOK_SINK}/`)).toBe(true);
  });

  it('changes nothing when run again: every file byte for byte, .sops.yaml and the key included', () => {
    const before = treeContents(root);
    const key = fs.readFileSync(keyFile, 'utf8');
    const again = init({ root, keyFile });
    expect(again.written).toEqual([]);
    expect(again.created).toEqual([]);
    expect(again.keyCreated).toBe(false);
    expect(again.sopsConfigChanged).toBe(false);
    expect(treeContents(root)).toEqual(before);
    expect(fs.readFileSync(keyFile, 'utf8')).toBe(key);
  });

  it('leaves no private key or plaintext value for git: the scan passes and the key file is not in the tree', () => {
    const files = projectFiles(root);
    expect([...files.keys()].filter((file) => file.endsWith('.sops.yaml')).length).toBe(secretCatalog(local).length + 1);
    expect(scanForPlaintextSecrets(files)).toEqual([]);
    const key = fs.readFileSync(keyFile, 'utf8');
    for (const [file, text] of files) expect(text.includes(key.trim().split('\n').pop()!), file).toBe(false);
  });

  it('--rotate replaces that Secret\'s generated values and their copies, and touches no other file', () => {
    const user = applicationBrokerUser(localApp());
    const read = (secret: string) => decrypt(root, fileOf(local, secret), keyFile).manifest.stringData;
    const old = read(brokerUserSecret(user)).password;
    const before = treeContents(root);
    const rotated = init({ root, keyFile, rotate: [brokerClientSecret(localApp().name)] });
    const fresh = read(brokerUserSecret(user)).password;
    expect(fresh).not.toBe(old);
    expect(meetsPasswordPolicy(fresh)).toBe(true);
    expect(read(brokerClientSecret(localApp().name)).password).toBe(fresh);
    expect(read(smokeName(localApp().name)).KAFKA_PASSWORD).toBe(fresh);
    expect([...rotated.written].sort()).toEqual(
      [brokerUserSecret(user), brokerClientSecret(localApp().name), smokeName(localApp().name)].map((name) => fileOf(local, name)).sort(),
    );
    const after = treeContents(root);
    const changed = [...after.keys()].filter((file) => after.get(file) !== before.get(file)).sort();
    expect(changed).toEqual([...rotated.written].sort());
  });

  it('keeps a value a person sets with --set, and its copies follow it', () => {
    const dir = repositoryCopy();
    try {
      const keyFile2 = path.join(keys, 'set.key');
      const report = init({ root: dir, keyFile: keyFile2, assignments: [{ option: '--set', text: `${brokerClientSecret(localApp().name)}.password=Chosen-by-a-person_1` }] });
      expect(report.missing).toEqual([]);
      const read = (secret: string) => decrypt(dir, fileOf(local, secret), keyFile2).manifest.stringData;
      expect(read(brokerUserSecret(applicationBrokerUser(localApp()))).password).toBe('Chosen-by-a-person_1');
      expect(read(smokeName(localApp().name)).KAFKA_PASSWORD).toBe('Chosen-by-a-person_1');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run secrets -- init for an environment with values only people have', () => {
  it('writes what it can, lists per Secret and key what is missing with its variable, and exits 1', async () => {
    const dir = repositoryCopy();
    const keyFile = path.join(keys, 'testing.key');
    try {
      const result = await runInProcess(SECRETS, ['init', 'testing', '--root', dir, '--key-file', keyFile], ROOT, { PLATFORM_GITOPS_CHAT_WEBHOOK_URL: 'https://chat.example.com/hooks/platform' });
      expect(result.status).toBe(1);
      const missing = secretValues(testing).filter((spec) => spec.source === 'supplied' && spec.id !== 'chat-webhook.url');
      expect(missing.length).toBeGreaterThan(0);
      for (const spec of missing) {
        expect(result.stderr).toContain(`    - ${spec.id}: ${spec.what} (set ${variableName(spec.id)}, or --set ${spec.id}=... / --from-file ${spec.id}=<file>)`);
        expect(fs.existsSync(path.join(dir, fileOf(testing, spec.id.slice(0, spec.id.indexOf('.')))))).toBe(false);
      }
      expect(result.stderr).not.toContain('chat-webhook.url');
      expect(result.stderr).not.toMatch(/\n\s+at /);
      const chat = decrypt(dir, fileOf(testing, 'chat-webhook'), keyFile);
      expect(chat.manifest.stringData.url).toBe('https://chat.example.com/hooks/platform');
      // The rest given from files, the second run completes the environment.
      fs.writeFileSync(path.join(keys, 'docker.json'), '{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}\n');
      const done = await runInProcess(SECRETS, [
        'init', 'testing', '--root', dir, '--key-file', keyFile,
        '--from-file', `registry-pull..dockerconfigjson=${path.join(keys, 'docker.json')}`,
        '--set', 'on-call-webhook.url=https://pager.example.com/integration/1',
      ]);
      expect(done.stderr).toBe('');
      expect(done.status).toBe(0);
      expect(decrypt(dir, fileOf(testing, 'registry-pull'), keyFile).manifest.stringData['.dockerconfigjson']).toBe(
        '{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a key file inside the repository, and a --set of a derived or unknown key (exit 2), writing nothing', async () => {
    const dir = repositoryCopy();
    try {
      const before = treeContents(dir);
      const inside = await runInProcess(SECRETS, ['init', 'local', '--root', dir, '--key-file', path.join(dir, 'keys', 'local.key')]);
      expect(inside.status).toBe(1);
      expect(inside.stderr).toMatch(/^secrets: --key-file .*keys\/local\.key is inside the repository \(keys\/local\.key\); a private key must never be where git can commit it\n$/);
      const derived = await runInProcess(SECRETS, ['init', 'local', '--root', dir, '--key-file', path.join(keys, 'x.key'), '--set', 'webapp-database.connection-string=x']);
      expect(derived.status).toBe(2);
      expect(derived.stderr).toContain('webapp-database.connection-string is built from webapp-sql-login.password; set that instead');
      const unknown = await runInProcess(SECRETS, ['init', 'local', '--root', dir, '--key-file', path.join(keys, 'x.key'), '--rotate', 'nope']);
      expect(unknown.status).toBe(2);
      expect(unknown.stderr).toContain('--rotate nope: no such Secret in local');
      // The one spawn of the entry point: argv, the usage error, exit 2, no stack trace.
      const environment = runCli('secrets', ['init', 'nowhere', '--root', dir]);
      expect(environment.status).toBe(2);
      expect(environment.stderr).toContain('unknown environment "nowhere"');
      expect(environment.stderr).not.toMatch(/\n\s+at /);
      expect(treeContents(dir)).toEqual(before);
      expect(fs.existsSync(path.join(keys, 'x.key'))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses, naming the files, when encrypted files exist but their key is not there', async () => {
    const dir = repositoryCopy();
    try {
      init({ root: dir, keyFile: path.join(keys, 'first.key') });
      const before = treeContents(dir);
      const result = await runInProcess(SECRETS, ['init', 'local', '--root', dir, '--key-file', path.join(keys, 'absent.key')]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`local: there is no key ${path.join(keys, 'absent.key')}, but ${secretCatalog(local).length} encrypted files exist`);
      expect(result.stderr).toContain('--rotate-key');
      expect(treeContents(dir)).toEqual(before);
      expect(fs.existsSync(path.join(keys, 'absent.key'))).toBe(false);
      // Another environment's key: sops' reason, both public keys, and .sops.yaml untouched.
      generateKey(tools, path.join(keys, 'other.key'));
      const wrong = await runInProcess(SECRETS, ['init', 'local', '--root', dir, '--key-file', path.join(keys, 'other.key')]);
      expect(wrong.status).toBe(1);
      expect(wrong.stderr).toContain('sops decrypt failed');
      expect(wrong.stderr).toContain(`holds the key of ${publicKeyOf(tools, path.join(keys, 'other.key'))}; .sops.yaml names ${recipientOf(dir, 'local')} for local; nothing was changed`);
      expect(treeContents(dir)).toEqual(before);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
