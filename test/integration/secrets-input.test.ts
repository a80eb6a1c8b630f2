import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { brokerUserSecret, databaseLoginSecret, smokeName } from '../../src/contract/naming';
import { MAX_KEY_FILE_BYTES, MAX_VALUE_FILE_BYTES } from '../../src/secrets/limits';
import { SECRETS } from '../../src/commands/secrets';
import { ROOT, runInProcess, treeContents } from '../support';
import { local, localApp, repositoryCopy, keys, decrypt, fileOf, init, useSecretsWork } from './secrets-work';

useSecretsWork();

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
