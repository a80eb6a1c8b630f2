import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART_WAVES } from '../../src/contract/choices';
import { SYNC_WAVE_ANNOTATION } from '../../src/contract/upstream';
import { encryptedFileName, secretsPath } from '../../src/contract/layout';
import { brokerClientSecret, brokerUserSecret, databaseLoginSecret, databaseSecret, smokeName } from '../../src/contract/naming';
import { ANONYMOUS_DOCKER_CONFIG, LOCAL_WEBHOOK_SINK, applicationBrokerUser, secretCatalog, secretValues } from '../../src/secrets/catalog';
import { type InitOptions, initEnvironment, recipientOf, recipientsOf, rotateKeys, writeRecipient } from '../../src/secrets/init';
import { projectFiles, scanForPlaintextSecrets } from '../../src/secrets/scan';
import { checkEncryptedFiles } from '../../src/secrets/encryption';
import { MAX_KEY_FILE_BYTES, MAX_SOPS_CONFIG_BYTES, MAX_VALUE_FILE_BYTES } from '../../src/secrets/limits';
import { Sops, type SopsTools, generateKey, publicKeyOf, sopsTools } from '../../src/secrets/sops';
import { PASSWORD, generatePassword, meetsPasswordPolicy, variableName } from '../../src/secrets/values';
import { SECRETS } from '../../src/commands/secrets';
import { ROOT, projectEnvironments, runCli, runInProcess, temporaryDirectory, treeContents } from '../support';

const environments = projectEnvironments();
const local = environments.local!;
/** The application of local whose Secrets the tests read. */
const localApp = () => local.applications[0]!;
const testing = environments.testing!;

/** The parts of the repository init reads and writes, without any encrypted file, in a fresh git work tree. */
function repositoryCopy(): string {
  const dir = temporaryDirectory('platform-gitops-secrets-');
  fs.copyFileSync(path.join(ROOT, '.sops.yaml'), path.join(dir, '.sops.yaml'));
  fs.cpSync(path.join(ROOT, 'secrets'), path.join(dir, 'secrets'), { recursive: true, filter: (source) => !source.endsWith('.sops.yaml') });
  expect(spawnSync('git', ['init', '--quiet', dir]).status).toBe(0);
  return dir;
}

let tools: SopsTools;
let work: string;
let keys: string;

beforeAll(() => {
  // Builds sops and age-keygen from their Go modules the first time (cached afterwards).
  tools = sopsTools(ROOT);
  work = temporaryDirectory('platform-gitops-secrets-work-');
  keys = temporaryDirectory('platform-gitops-age-');
}, 600_000);

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(keys, { recursive: true, force: true });
});

/** What real sops decrypts a file to with `keyFile`, as a person would run it. */
function decrypt(root: string, file: string, keyFile: string): { status: number | null; manifest: any; stderr: string } {
  const result = spawnSync(tools.sops, ['decrypt', path.join(root, file)], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: keys, SOPS_AGE_KEY_FILE: keyFile },
  });
  return { status: result.status, manifest: result.status === 0 ? parse(result.stdout) : undefined, stderr: result.stderr };
}

function fileOf(environment: typeof local, secret: string): string {
  const spec = secretCatalog(environment).find((candidate) => candidate.name === secret)!;
  return `${secretsPath(environment.name, spec.group)}/${encryptedFileName(secret)}`;
}

function init(options: Partial<InitOptions> & { root: string; keyFile: string }) {
  return initEnvironment({ environment: local, tools, env: {}, ...options });
}

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

describe('age key rotation', () => {
  it('rotate-keys re-encrypts every file for the new recipient: the new key decrypts, the old one no longer does', () => {
    const dir = repositoryCopy();
    try {
      const oldKey = path.join(keys, 'rotation-old.key');
      const newKey = path.join(keys, 'rotation-new.key');
      init({ root: dir, keyFile: oldKey });
      const file = fileOf(local, 'database-admin');
      const value = decrypt(dir, file, oldKey).manifest.stringData.password;
      generateKey(tools, newKey);
      expect(writeRecipient(dir, 'local', publicKeyOf(tools, newKey))).toBe(true);
      const updated = rotateKeys({ root: dir, environment: local, keyFile: newKey, oldKeyFiles: [oldKey], tools });
      expect(updated).toHaveLength(secretCatalog(local).length);
      for (const each of updated) expect(recipientsOf(dir, each)).toEqual([publicKeyOf(tools, newKey)]);
      expect(decrypt(dir, file, newKey).manifest.stringData.password).toBe(value);
      expect(decrypt(dir, file, oldKey).status).not.toBe(0);
      // And init with the new key then finds nothing to change.
      const before = treeContents(dir);
      expect(init({ root: dir, keyFile: newKey }).written).toEqual([]);
      expect(treeContents(dir)).toEqual(before);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('init --rotate-key keeps every value under a new key pair, the old key kept beside as .previous', () => {
    const dir = repositoryCopy();
    try {
      const keyFile = path.join(keys, 'rotate-key', 'local.key');
      init({ root: dir, keyFile });
      const oldPublic = publicKeyOf(tools, keyFile);
      const file = fileOf(local, 'database-admin');
      const value = decrypt(dir, file, keyFile).manifest.stringData.password;
      const report = init({ root: dir, keyFile, rotateKey: true });
      expect(report.publicKey).not.toBe(oldPublic);
      expect(publicKeyOf(tools, `${keyFile}.previous`)).toBe(oldPublic);
      expect(report.written).toHaveLength(secretCatalog(local).length);
      expect(decrypt(dir, file, keyFile).manifest.stringData.password).toBe(value);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('.sops.yaml: the rule sops uses is the first whose path_regex matches', () => {
  /** `.sops.yaml` of `dir` with `rule` (YAML lines of one list item) put before every other rule. */
  function withEarlierRule(dir: string, rule: string): void {
    const file = path.join(dir, '.sops.yaml');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('creation_rules:\n', `creation_rules:\n${rule}`));
  }

  it('refuses an earlier rule naming another age key, and one that would encrypt nothing, naming each; nothing is written', async () => {
    const dir = repositoryCopy();
    try {
      const keyFile = path.join(keys, 'shadowed', 'local.key');
      generateKey(tools, keyFile);
      const own = publicKeyOf(tools, keyFile);
      generateKey(tools, path.join(keys, 'shadowed', 'extra.key'));
      const extra = publicKeyOf(tools, path.join(keys, 'shadowed', 'extra.key'));
      withEarlierRule(dir, `  - path_regex: secrets/local/${localApp().name}/\n    encrypted_regex: ^nothing$\n    age: ${own}\n`);
      withEarlierRule(dir, `  - path_regex: secrets/local/database/\n    encrypted_regex: ^(data|stringData)$\n    age: ${own},${extra}\n`);
      const before = treeContents(dir);
      const result = await runInProcess(SECRETS, ['init', 'local', '--root', dir, '--key-file', keyFile]);
      expect(result.status).toBe(1);
      const lines = result.stderr.split('\n');
      expect(lines[0]).toBe('secrets: local: nothing written; fix these first:');
      expect(lines).toContainEqual(expect.stringMatching(/^ {2}- \.sops\.yaml: creation_rules\[0\] \(path_regex "secrets\/local\/database\/"\) matches secrets\/local\/database\/\S+ \(and \d+ more of local's files\) before local's own rule creation_rules\[2\]; sops uses the first rule that matches: /));
      expect(result.stderr).toContain(`it would encrypt them for ${own}, ${extra}, not for local's key alone; put local's rule first or narrow that path_regex`);
      expect(result.stderr).toContain(`creation_rules[1] (path_regex "secrets/local/${localApp().name}/") matches secrets/local/${localApp().name}/`);
      expect(result.stderr).toContain('it would encrypt them with encrypted_regex "^nothing$", not "^(data|stringData)$" (every value of data and stringData); put local\'s rule first or narrow that path_regex');
      expect(treeContents(dir)).toEqual(before);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('checks what sops wrote before it reaches the disk: other recipients or a plaintext value refuse the run, nothing written', () => {
    const dir = repositoryCopy();
    try {
      const keyFile = path.join(keys, 'wrapped', 'local.key');
      generateKey(tools, keyFile);
      generateKey(tools, path.join(keys, 'wrapped', 'extra.key'));
      const extra = publicKeyOf(tools, path.join(keys, 'wrapped', 'extra.key'));
      const before = treeContents(dir);
      // sops given flags that override the creation rule, as a changed sops default or a wrapper would.
      for (const [flags, problem] of [
        [`--age ${publicKeyOf(tools, keyFile)},${extra}`, `sops encrypted it for ${[publicKeyOf(tools, keyFile), extra].sort().join(', ')}; it must be encrypted for local's key ${publicKeyOf(tools, keyFile)} only`],
        ["--encrypted-regex '^nothing$'", 'stringData.password is not encrypted (sops wrote it in plaintext)'],
      ] as const) {
        const wrapper = path.join(keys, 'wrapped', 'sops');
        fs.writeFileSync(wrapper, `#!/bin/sh\nif [ "$3" = encrypt ]; then c="$2"; shift 3; exec ${tools.sops} --config "$c" encrypt ${flags} "$@"; fi\nexec ${tools.sops} "$@"\n`, { mode: 0o755 });
        expect(() => init({ root: dir, keyFile, tools: { ...tools, sops: wrapper } }), flags).toThrow(problem);
        expect(treeContents(dir)).toEqual(before);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds files already written under such a rule (check and scan) and writes them anew once the rule is right', () => {
    const dir = repositoryCopy();
    try {
      const keyFile = path.join(keys, 'on-disk', 'local.key');
      init({ root: dir, keyFile });
      const own = publicKeyOf(tools, keyFile);
      generateKey(tools, path.join(keys, 'on-disk', 'extra.key'));
      const extra = publicKeyOf(tools, path.join(keys, 'on-disk', 'extra.key'));
      const original = fs.readFileSync(path.join(dir, '.sops.yaml'), 'utf8');
      const admin = fileOf(local, 'database-admin');
      const chat = fileOf(local, 'chat-webhook');
      // What an init before this check wrote under the earlier rules.
      const sops = (rule: string, file: string) => {
        withEarlierRule(dir, rule);
        const home = temporaryDirectory();
        try {
          const sops = new Sops(tools, dir, fs.readFileSync(keyFile, 'utf8'), home);
          fs.writeFileSync(path.join(dir, file), sops.encrypt(file, sops.decrypt(file)));
        } finally {
          fs.rmSync(home, { recursive: true, force: true });
          fs.writeFileSync(path.join(dir, '.sops.yaml'), original);
        }
      };
      sops(`  - path_regex: secrets/local/database/\n    encrypted_regex: ^(data|stringData)$\n    age: ${own},${extra}\n`, admin);
      sops(`  - path_regex: secrets/local/monitoring/\n    encrypted_regex: ^nothing$\n    age: ${own}\n`, chat);
      expect(recipientsOf(dir, admin)).toEqual([own, extra].sort());
      expect(parse(fs.readFileSync(path.join(dir, chat), 'utf8')).stringData.url).toMatch(/^http/);

      expect(checkEncryptedFiles(dir, [local])).toEqual([
        `${admin}: encrypted for ${[own, extra].sort().join(', ')}; .sops.yaml names ${own} for local: run npm run secrets -- init local`,
        `${chat}: stringData.url is not encrypted (sops wrote it in plaintext)`,
        `${chat}: sops.encrypted_regex "^nothing$" must be "^(data|stringData)$"`,
      ]);
      expect(scanForPlaintextSecrets(projectFiles(dir))).toEqual([
        { file: admin, problem: `encrypted for ${[own, extra].sort().join(', ')}; .sops.yaml names ${own} for local: run npm run secrets -- init local` },
        { file: chat, problem: 'Secret chat-webhook holds url in plaintext: encrypt it with sops' },
      ]);

      // rotate-keys would wrap the data keys for such a rule's recipients: refused, no file touched.
      withEarlierRule(dir, `  - path_regex: secrets/local/database/\n    encrypted_regex: ^(data|stringData)$\n    age: ${own},${extra}\n`);
      const before = treeContents(dir);
      expect(() => rotateKeys({ root: dir, environment: local, keyFile, tools })).toThrow('.sops.yaml: creation_rules[0] (path_regex "secrets/local/database/") matches');
      expect(treeContents(dir)).toEqual(before);
      fs.writeFileSync(path.join(dir, '.sops.yaml'), original);

      const report = init({ root: dir, keyFile });
      expect([...report.written].sort()).toEqual([admin, chat].sort());
      expect(checkEncryptedFiles(dir, [local])).toEqual([]);
      expect(scanForPlaintextSecrets(projectFiles(dir))).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses by name a .sops.yaml that is empty, not a mapping, without a creation_rules list or too large', async () => {
    const dir = repositoryCopy();
    try {
      const keyFile = path.join(keys, 'config', 'local.key');
      for (const [text, problem] of [
        ['', '.sops.yaml: is empty; expected a mapping with creation_rules, a list of one rule per environment (docs/secrets.md)'],
        ['# only a comment\n', '.sops.yaml: is empty; expected a mapping with creation_rules, a list of one rule per environment (docs/secrets.md)'],
        ['just text\n', '.sops.yaml: is a string; expected a mapping with creation_rules, a list of one rule per environment (docs/secrets.md)'],
        ['stores: {}\n', '.sops.yaml: creation_rules is missing; expected a list of one rule per environment (docs/secrets.md)'],
        ['creation_rules:\n', '.sops.yaml: creation_rules is empty; expected a list of one rule per environment (docs/secrets.md)'],
        ['creation_rules:\n  - 3\n', '.sops.yaml: creation_rules[0] is a number; expected a mapping with path_regex, encrypted_regex and age'],
        [`# ${'x'.repeat(MAX_SOPS_CONFIG_BYTES)}\n`, `.sops.yaml: larger than 64 KiB (MAX_SOPS_CONFIG_BYTES)`],
      ] as const) {
        fs.writeFileSync(path.join(dir, '.sops.yaml'), text);
        const before = treeContents(dir);
        const result = await runInProcess(SECRETS, ['init', 'local', '--root', dir, '--key-file', keyFile]);
        expect(result.status, JSON.stringify(text)).toBe(1);
        expect(result.stderr).toContain(problem);
        expect(result.stderr).not.toContain('Cannot read properties');
        expect(treeContents(dir)).toEqual(before);
        expect(fs.existsSync(keyFile)).toBe(false);
        expect(() => recipientOf(dir, 'local')).toThrow(problem);
        expect(() => writeRecipient(dir, 'local', 'age1x')).toThrow(problem);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('values people give are checked before anything is written', () => {
  it('refuses a control character in a value, naming the value and where it came from, all at once', async () => {
    const dir = repositoryCopy();
    const keyFile = path.join(keys, 'control', 'local.key');
    try {
      const before = treeContents(dir);
      const valueFile = path.join(keys, 'control-password.txt');
      fs.writeFileSync(valueFile, 'Abcdef-12\nsecond line\n');
      const app = localApp().name;
      const result = await runInProcess(
        SECRETS,
        ['init', 'local', '--root', dir, '--key-file', keyFile, '--set', `${smokeName(app)}.SMOKE_USERNAME=smoke\nX-Injected: 1`, '--from-file', `${databaseLoginSecret(app)}.password=${valueFile}`],
        ROOT,
        { PLATFORM_GITOPS_CHAT_WEBHOOK_URL: 'https://chat.example.com/hooks/1\r\nX-Injected: 1' },
      );
      expect(result.status).toBe(1);
      expect(result.stderr.split('\n')).toEqual([
        'secrets: local: nothing written; fix these first:',
        `  - --from-file ${valueFile}: ${databaseLoginSecret(app)}.password holds a line feed (U+000A) at character 10: a value must be one line without control characters (it ends up in an environment variable, a header or a URL)`,
        `  - --set: ${smokeName(app)}.SMOKE_USERNAME holds a line feed (U+000A) at character 6: a value must be one line without control characters (it ends up in an environment variable, a header or a URL)`,
        '  - PLATFORM_GITOPS_CHAT_WEBHOOK_URL: chat-webhook.url holds a carriage return (U+000D) at character 33: a value must be one line without control characters (it ends up in an environment variable, a header or a URL)',
        '',
      ]);
      expect(treeContents(dir)).toEqual(before);
      expect(fs.existsSync(keyFile)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('holds the database administrator and login passwords to SQL Server\'s password policy, given or generated', async () => {
    const dir = repositoryCopy();
    const keyFile = path.join(keys, 'weak', 'local.key');
    try {
      const before = treeContents(dir);
      const app = localApp().name;
      const result = await runInProcess(SECRETS, [
        'init', 'local', '--root', dir, '--key-file', keyFile,
        '--set', 'database-admin.password=password',
        '--set', `${databaseLoginSecret(app)}.password=alllowercase1`,
      ]);
      expect(result.status).toBe(1);
      const rule = "SQL Server's password policy: at least 8 and at most 128 characters, from three of upper-case letters, lower-case letters, digits and symbols";
      expect(result.stderr).toContain(`  - --set: database-admin.password does not meet ${rule} (it has 8 characters, 1 kind)\n`);
      expect(result.stderr).toContain(`  - --set: ${databaseLoginSecret(app)}.password does not meet ${rule} (it has 13 characters, 2 kinds)\n`);
      expect(treeContents(dir)).toEqual(before);
      expect(fs.existsSync(keyFile)).toBe(false);
      // A generator that breaks the policy is refused the same way, before anything is written.
      expect(() => init({ root: dir, keyFile, generate: () => 'Weak1' })).toThrow(`generated: database-admin.password does not meet ${rule} (it has 5 characters, 3 kinds)`);
      expect(treeContents(dir)).toEqual(before);
      // Three kinds of eight characters or more is enough.
      expect(init({ root: dir, keyFile, assignments: [{ option: '--set', text: 'database-admin.password=Admin-pass' }] }).missing).toEqual([]);
      expect(decrypt(dir, fileOf(local, 'database-admin'), keyFile).manifest.stringData.password).toBe('Admin-pass');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("holds a broker user's password to printable ASCII, which Kafka's client properties carry", async () => {
    const dir = repositoryCopy();
    const keyFile = path.join(keys, 'kafka', 'local.key');
    try {
      const before = treeContents(dir);
      const app = localApp().name;
      const result = await runInProcess(SECRETS, ['init', 'local', '--root', dir, '--key-file', keyFile, '--set', `${brokerUserSecret(app)}.password=Pässword-1`]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(
        `  - --set: ${brokerUserSecret(app)}.password holds "ä" at character 2: a Kafka password must be printable ASCII (Kafka's tools read a client's properties file as ISO 8859-1, so the smoke test's broker step would send another password)\n`,
      );
      expect(treeContents(dir)).toEqual(before);
      // A backslash is printable ASCII: the broker step escapes it.
      expect(init({ root: dir, keyFile, assignments: [{ option: '--set', text: `${brokerUserSecret(app)}.password=back\\slash-1` }] }).missing).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

});

describe('every file init reads is bounded', () => {
  it('refuses a value file and a key file larger than their limits, naming the file and the limit', async () => {
    const dir = repositoryCopy();
    try {
      const big = path.join(keys, 'big.json');
      fs.writeFileSync(big, `{"auths":{},"x":"${'x'.repeat(MAX_VALUE_FILE_BYTES)}"}`);
      const before = treeContents(dir);
      const value = await runInProcess(SECRETS, ['init', 'local', '--root', dir, '--key-file', path.join(keys, 'bounded.key'), '--from-file', `registry-pull..dockerconfigjson=${big}`]);
      expect(value.status).toBe(1);
      expect(value.stderr).toContain(`--from-file ${big}: larger than 64 KiB (MAX_VALUE_FILE_BYTES)`);
      const keyFile = path.join(keys, 'big.key');
      fs.writeFileSync(keyFile, `# ${'x'.repeat(MAX_KEY_FILE_BYTES)}\n`, { mode: 0o600 });
      const key = await runInProcess(SECRETS, ['init', 'local', '--root', dir, '--key-file', keyFile]);
      expect(key.status).toBe(1);
      expect(key.stderr).toContain(`${keyFile}: larger than 16 KiB (MAX_KEY_FILE_BYTES)`);
      expect(treeContents(dir)).toEqual(before);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
