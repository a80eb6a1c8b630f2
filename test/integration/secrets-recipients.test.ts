import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { secretCatalog } from '../../src/secrets/catalog';
import { recipientOf, recipientsOf, rotateKeys, writeRecipient } from '../../src/secrets/init';
import { projectFiles, scanForPlaintextSecrets } from '../../src/secrets/scan';
import { checkEncryptedFiles } from '../../src/secrets/encryption';
import { MAX_SOPS_CONFIG_BYTES } from '../../src/secrets/limits';
import { Sops, generateKey, publicKeyOf } from '../../src/secrets/sops';
import { SECRETS } from '../../src/commands/secrets';
import { runInProcess, temporaryDirectory, treeContents } from '../support';
import { local, localApp, repositoryCopy, tools, keys, decrypt, fileOf, init, useSecretsWork } from './secrets-work';

useSecretsWork();

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
