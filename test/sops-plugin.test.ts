import { spawnSync } from 'node:child_process';
import { type KeyObject, generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadEnvironments } from '../src/environments';
import { SOPS_PLUGIN_GENERATE } from '../src/infrastructure/argo-cd-values';
import { SOPS_PLUGIN } from '../src/contract/choices';
import { pluginExpectation, secretCatalog } from '../src/secrets/catalog';
import { secretManifest } from '../src/secrets/layout';
import { Sops } from '../src/secrets/sops';
import { locateToolchain } from '../toolchain';
import { ROOT, temporaryDirectory } from './support';

// Issue 50, item 1: the repository server's sops plugin checks each decrypted document before
// it emits anything. Run here as the sidecar runs it (`sh -c`, in the source folder, the
// Application's plugin variable as ARGOCD_ENV_SECRETS): with a stand-in sops that prints a
// plain file as sops' JSON, and with the real sops the toolchain built.

const local = loadEnvironments().find((environment) => environment.name === 'local')!;
const monitoring = secretCatalog(local).filter((secret) => secret.group === 'monitoring');
const chat = monitoring.find((secret) => secret.name === 'chat-webhook')!;
const EXPECTATION = { [`ARGOCD_ENV_${SOPS_PLUGIN.expectationVariable}`]: pluginExpectation(monitoring) };

/** The ClusterRoleBinding of the issue, saved under a Secret's file name. */
const CLUSTER_ROLE_BINDING = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name: 'chat-webhook' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
  subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'monitoring' }],
  stringData: { url: 'x' },
};

let dir: string;
let folder: string;
let bin: string;
beforeEach(() => {
  dir = temporaryDirectory();
  folder = path.join(dir, 'secrets', 'local', 'monitoring');
  bin = path.join(dir, 'bin');
  fs.mkdirSync(folder, { recursive: true });
  fs.mkdirSync(bin);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The plugin's generate command in `folder`, with `sops` from `sopsDir` first on PATH. */
function generate(sopsDir: string, env: NodeJS.ProcessEnv = {}) {
  return spawnSync('sh', ['-c', SOPS_PLUGIN_GENERATE], { cwd: folder, encoding: 'utf8', env: { PATH: `${sopsDir}:/usr/bin:/bin`, ...EXPECTATION, ...env } });
}

describe('the sops plugin, on what sops decrypted', () => {
  /** A stand-in sops: `sops decrypt ... <file>` prints the (plain) file as sops' JSON, tab-indented. */
  beforeEach(() => {
    fs.writeFileSync(
      path.join(bin, 'sops'),
      `#!${process.execPath}\nconst file = process.argv.at(-1);\nconst { parse } = require(${JSON.stringify(require.resolve('yaml'))});\nprocess.stdout.write(JSON.stringify(parse(require('fs').readFileSync(file, 'utf8')), null, '\\t') + '\\n');\n`,
      { mode: 0o755 },
    );
  });
  const write = (name: string, document: unknown) => fs.writeFileSync(path.join(folder, name), stringify(document));
  const valid = () => {
    for (const secret of monitoring) write(`${secret.name}.sops.yaml`, secretManifest(secret, Object.fromEntries(Object.keys(secret.keys).map((key) => [key, `https://hooks.example.com/"${key}"\n`]))));
  };

  it('emits every Secret of the catalog, as YAML that reads back as the decrypted document', () => {
    valid();
    const result = generate(bin);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const documents = parseAllDocuments(result.stdout).map((document) => document.toJS());
    expect(documents).toEqual(monitoring.map((secret) => secretManifest(secret, Object.fromEntries(Object.keys(secret.keys).map((key) => [key, `https://hooks.example.com/"${key}"\n`])))).sort((a, b) => (a.metadata as { name: string }).name.localeCompare((b.metadata as { name: string }).name)));
  });

  it.each([
    ['a ClusterRoleBinding', CLUSTER_ROLE_BINDING, '"apiVersion" is "rbac.authorization.k8s.io/v1", expected "v1"'],
    ['a renamed key', { ...secretManifest(chat, {}), stringData: { address: 'x' } }, '"stringData"."address" is not a key of the Secret chat-webhook in the catalog'],
    ['namespace renamed to generateName', { ...secretManifest(chat, { url: 'x' }), metadata: { name: 'chat-webhook', generateName: 'monitoring', annotations: { 'argocd.argoproj.io/sync-wave': '-2' } } }, '"metadata"."generateName" is not allowed'],
    ['another namespace', { ...secretManifest(chat, { url: 'x' }), metadata: { name: 'chat-webhook', namespace: 'kube-system', annotations: { 'argocd.argoproj.io/sync-wave': '-2' } } }, '"metadata"."namespace" is "kube-system", expected "monitoring"'],
    ['a missing key', secretManifest(chat, {}) && { ...secretManifest(chat, {}), stringData: {} }, 'stringData does not hold exactly the keys of the Secret chat-webhook'],
    ['a label', { ...secretManifest(chat, { url: 'x' }), metadata: { ...(secretManifest(chat, {}).metadata as object), labels: { a: 'b' } } }, '"metadata"."labels" is not allowed'],
    ['a value that is no string', { ...secretManifest(chat, {}), stringData: { url: 1234 } }, '"stringData"."url" is not a string'],
  ])('refuses %s, naming the file and the rule, and emits nothing', (_case, document, rule) => {
    valid();
    write('chat-webhook.sops.yaml', document);
    const result = generate(bin);
    expect(result.status).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`sops plugin: chat-webhook.sops.yaml: ${rule}`);
  });

  // The sidecar runs upstream's alpine sops image: busybox's sh and awk. Where busybox is installed, the same here.
  it.skipIf(!fs.existsSync('/usr/bin/busybox'))('works with busybox\'s sh and awk, as in the sops image', () => {
    const applets = path.join(dir, 'busybox');
    fs.mkdirSync(applets);
    for (const applet of ['sh', 'awk', 'printf', 'cat']) fs.symlinkSync('/usr/bin/busybox', path.join(applets, applet));
    const busybox = (env: NodeJS.ProcessEnv = {}) =>
      spawnSync('/usr/bin/busybox', ['sh', '-c', SOPS_PLUGIN_GENERATE], { cwd: folder, encoding: 'utf8', env: { PATH: `${bin}:${applets}`, ...EXPECTATION, ...env } });
    valid();
    const emitted = busybox();
    expect(emitted.stderr).toBe('');
    expect(parseAllDocuments(emitted.stdout).map((document) => document.toJS().metadata.name)).toEqual(monitoring.map((secret) => secret.name).sort());
    write('chat-webhook.sops.yaml', CLUSTER_ROLE_BINDING);
    const refused = busybox();
    expect(refused.status).not.toBe(0);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('sops plugin: chat-webhook.sops.yaml: "apiVersion" is "rbac.authorization.k8s.io/v1", expected "v1"');
  });

  it('takes a file name as one word whatever it holds, and refuses one the catalog does not name', () => {
    valid();
    write('on-call-webhook extra.sops.yaml', secretManifest(chat, { url: 'x' }));
    const result = generate(bin);
    expect(result.status).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('sops plugin: on-call-webhook extra.sops.yaml: the catalog names no Secret on-call-webhook extra in this folder');
  });

  it('refuses a symbolic link, and everything without the Application\'s expectation', () => {
    valid();
    fs.renameSync(path.join(folder, 'chat-webhook.sops.yaml'), path.join(dir, 'elsewhere.yaml'));
    fs.symlinkSync(path.join(dir, 'elsewhere.yaml'), path.join(folder, 'chat-webhook.sops.yaml'));
    const linked = generate(bin);
    expect(linked.status).not.toBe(0);
    expect(linked.stdout).toBe('');
    expect(linked.stderr).toContain('sops plugin: chat-webhook.sops.yaml: is not a regular file');
    fs.rmSync(path.join(folder, 'chat-webhook.sops.yaml'));
    const unexpected = generate(bin, { [`ARGOCD_ENV_${SOPS_PLUGIN.expectationVariable}`]: '' });
    expect(unexpected.status).not.toBe(0);
    expect(unexpected.stdout).toBe('');
    expect(unexpected.stderr).toContain('the catalog names no Secret');
  });
});

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

/** BIP 173 bech32 of `bytes` under `prefix` (what age's keys and recipients are). */
function bech32(prefix: string, bytes: Buffer): string {
  const data: number[] = [];
  let accumulator = 0;
  let bits = 0;
  for (const byte of bytes) {
    accumulator = (accumulator << 8) | byte;
    bits += 8;
    while (bits >= 5) data.push((accumulator >> (bits -= 5)) & 31);
  }
  if (bits > 0) data.push((accumulator << (5 - bits)) & 31);
  const polymod = (values: number[]) => {
    let checksum = 1;
    for (const value of values) {
      const top = checksum >> 25;
      checksum = ((checksum & 0x1ffffff) << 5) ^ value;
      [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3].forEach((generator, bit) => {
        if ((top >> bit) & 1) checksum ^= generator;
      });
    }
    return checksum;
  };
  const expanded = [...[...prefix].map((c) => c.charCodeAt(0) >> 5), 0, ...[...prefix].map((c) => c.charCodeAt(0) & 31)];
  const checksum = polymod([...expanded, ...data, 0, 0, 0, 0, 0, 0]) ^ 1;
  const tail = [0, 1, 2, 3, 4, 5].map((index) => (checksum >> (5 * (5 - index))) & 31);
  return `${prefix}1${[...data, ...tail].map((value) => BECH32[value]).join('')}`;
}

/** A fresh age X25519 key pair (age's format: bech32 of the scalar and of the public point), made without age-keygen. */
function ageKeyPair(): { identity: string; recipient: string } {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const raw = (key: KeyObject, field: 'd' | 'x') => Buffer.from(key.export({ format: 'jwk' })[field]!, 'base64url');
  return { identity: bech32('age-secret-key-', raw(privateKey, 'd')).toUpperCase(), recipient: bech32('age', raw(publicKey, 'x')) };
}

describe('the sops plugin, with the real sops', () => {
  it('emits the catalog\'s Secrets and refuses a ClusterRoleBinding encrypted with the environment\'s public key', () => {
    const { identity, recipient } = ageKeyPair();
    const keyFile = path.join(dir, 'local.key');
    fs.writeFileSync(keyFile, `${identity}\n`, { mode: 0o600 });
    fs.writeFileSync(path.join(dir, '.sops.yaml'), `creation_rules:\n  - path_regex: secrets/local/.+\\.sops\\.yaml$\n    encrypted_regex: ^(data|stringData)$\n    age: ${recipient}\n`);
    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    // Encrypting needs the public key only; the identity is there to read back.
    // The toolchain's sops (`npm test` builds it before the unit tier); without it, an error naming what to build.
    const sopsBinary = locateToolchain(ROOT).bin('sops', 'sops');
    const sops = new Sops({ sops: sopsBinary, ageKeygen: '/nonexistent' }, dir, identity, home);
    const values = (secret: (typeof monitoring)[number]) => Object.fromEntries(Object.keys(secret.keys).map((key) => [key, `https://hooks.example.com/T0/B0?a="b"&c=\\d<e>`]));
    for (const secret of monitoring) {
      const file = `secrets/local/monitoring/${secret.name}.sops.yaml`;
      fs.writeFileSync(path.join(dir, file), sops.encrypt(file, stringify(secretManifest(secret, values(secret)))));
    }
    const run = () => generate(path.dirname(sopsBinary), { SOPS_AGE_KEY_FILE: keyFile, HOME: home });
    const emitted = run();
    expect(emitted.stderr).toBe('');
    expect(emitted.status).toBe(0);
    expect(parseAllDocuments(emitted.stdout).map((document) => document.toJS())).toEqual(
      [...monitoring].sort((a, b) => a.name.localeCompare(b.name)).map((secret) => secretManifest(secret, values(secret))),
    );
    // Written with the public key only: what anyone with write access to the repository can do.
    const file = 'secrets/local/monitoring/chat-webhook.sops.yaml';
    fs.writeFileSync(path.join(dir, file), sops.encrypt(file, stringify(CLUSTER_ROLE_BINDING)));
    const refused = run();
    expect(refused.status).not.toBe(0);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('sops plugin: chat-webhook.sops.yaml: "apiVersion" is "rbac.authorization.k8s.io/v1", expected "v1"');
    // A key renamed in the encrypted file (sops' MAC covers values, not key names) decrypts, and is refused.
    const renamed = `secrets/local/monitoring/on-call-webhook.sops.yaml`;
    fs.writeFileSync(path.join(dir, file), sops.encrypt(file, stringify(secretManifest(chat, values(chat)))));
    fs.writeFileSync(path.join(dir, renamed), fs.readFileSync(path.join(dir, renamed), 'utf8').replace('\n    namespace:', '\n    generateName:'));
    const generateName = run();
    expect(generateName.status).not.toBe(0);
    expect(generateName.stdout).toBe('');
    expect(generateName.stderr).toContain('sops plugin: on-call-webhook.sops.yaml: "metadata"."generateName" is not allowed');
  });
});
