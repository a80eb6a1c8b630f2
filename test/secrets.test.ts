import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { MAX_SCANNED_FILE_BYTES } from '../src/secrets/limits';
import { projectFiles, scanForPlaintextSecrets } from '../src/secrets/scan';
import { SECRETS } from '../src/commands/secrets';
import { Sops } from '../src/secrets/sops';
import { EDIT_DIR } from '../src/release/edit-lock';
import { dataCopy } from './project-copy';
import { ROOT, runInProcess, temporaryDirectory } from './support';

// Built from pieces, so that this file itself holds no key material for the scan to find.
const PEM_KEY = ['-----BEGIN OPENSSH ', 'PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH ', 'PRIVATE KEY-----'].join('');
const AGE_KEY = ['AGE-SECRET-KEY-', '1QQPQ7Z8NX6E3KVGJ8N0MT5YQZS4L5XK8RXDWYUQ3Q9ZPJ9Q2Y3HSVZ7C8'].join('');
const PGP_KEY = ['-----BEGIN PGP ', 'PRIVATE KEY BLOCK-----\n\nlQOYBGVh\n-----END PGP ', 'PRIVATE KEY BLOCK-----\n'].join('');
const PUTTY_KEY = ['PuTTY-User-', 'Key-File-3: ssh-ed25519\nEncryption: none\n'].join('');

/** A SOPS-encrypted value as sops writes it (the scan reads the envelope, not the cipher text). */
const ENC = 'ENC[AES256_GCM,data:Zm9v,iv:kfJCu7gZrFPP2TzQp2O9QMdf7xQdLBwH40NNKBprx3o=,tag:CAHaLVxg45mWPulAN4GKlA==,type:str]';
/** sops' metadata with its MAC (itself an envelope): what makes a file one that sops encrypted. */
const SOPS_METADATA = `sops:\n  mac: ${ENC}\n  version: 3.9.0\n`;

/** A fresh git repository holding `files`, for the scan's view of what git would commit. */
function gitRepository(files: Record<string, string>): string {
  const dir = temporaryDirectory();
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  const init = spawnSync('git', ['init', '--quiet', dir], { encoding: 'utf8' });
  expect(init.status, init.stderr).toBe(0);
  return dir;
}

describe('no plaintext secret in git or dist/ (5.3)', () => {
  it('finds none in the project, dist/ and secrets/ included', () => {
    const files = projectFiles(ROOT);
    const names = [...files.keys()];
    for (const file of ['.sops.yaml', 'dist/production/gitops.yaml', 'secrets/staging/database/database-admin.template.yaml', 'Pulumi.yaml']) {
      expect(names).toContain(file);
    }
    // What git would commit: ignored installs and build output are not the project's text.
    expect(names.filter((file) => /^(node_modules|build)\//.test(file))).toEqual([]);
    expect(scanForPlaintextSecrets(files)).toEqual([]);
  });

  // A process's arguments are world-readable (ps, /proc/<pid>/cmdline), its environment only
  // to its own user: sqlcmd reads the password from SQLCMDPASSWORD (go-sqlcmd and the ODBC
  // sqlcmd alike), so no rendered command hands it over as `-P`.
  it('passes no password on a rendered or documented command line: every sqlcmd reads SQLCMDPASSWORD', () => {
    const commandLines = [...projectFiles(ROOT).entries()]
      // What is rendered, and what the documentation tells a person to type.
      .filter(([file]) => (file.startsWith('dist/') && file.endsWith('.yaml')) || file === 'README.md' || (file.startsWith('docs/') && file.endsWith('.md')))
      .flatMap(([file, text]) => text.split('\n').filter((line) => line.includes('sqlcmd')).map((line) => `${file}: ${line.trim()}`));
    expect(commandLines.length).toBeGreaterThan(0);
    expect(commandLines.filter((line) => / -P\b/.test(line))).toEqual([]);
  });

  it('finds every committed template carrying its keys only, each value empty', () => {
    const templates = [...projectFiles(ROOT).entries()].filter(([file]) => file.endsWith('.template.yaml'));
    expect(templates.length).toBeGreaterThanOrEqual(4 * 4);
    for (const [file, text] of templates) {
      const secret = parse(text);
      expect(secret.kind, file).toBe('Secret');
      const values = Object.values({ ...secret.data, ...secret.stringData });
      expect(values.length, file).toBeGreaterThan(0);
      expect(new Set(values), file).toEqual(new Set(['']));
    }
  });

  it('accepts key-only templates and SOPS-encrypted values', () => {
    const files = new Map([
      ['secrets/local/database/database-admin.template.yaml', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: database-admin\nstringData:\n  password: ""\n'],
      ['secrets/local/database/database-admin.sops.yaml', `apiVersion: v1\nkind: Secret\nmetadata:\n  name: database-admin\nstringData:\n  password: ${ENC}\n${SOPS_METADATA}`],
    ]);
    expect(scanForPlaintextSecrets(files)).toEqual([]);
  });

  it('catches a filled-in template, a Secret with data, a private key and an age key', () => {
    const files = new Map([
      ['secrets/local/database/database-admin.template.yaml', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: database-admin\nstringData:\n  password: hunter2\n'],
      ['dist/local/application.yaml', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: aHVudGVyMg==\n'],
      ['pulumi/deploy-key', PEM_KEY],
      ['keys.txt', `# created: 2026-11-23\n${AGE_KEY}\n`],
    ]);
    expect(scanForPlaintextSecrets(files)).toEqual([
      { file: 'secrets/local/database/database-admin.template.yaml', problem: 'Secret database-admin holds password in plaintext: encrypt it with sops' },
      { file: 'dist/local/application.yaml', problem: 'Secret db holds password in plaintext: encrypt it with sops' },
      { file: 'pulumi/deploy-key', problem: 'contains a PEM private key' },
      { file: 'keys.txt', problem: 'contains an age secret key' },
    ]);
  });

  it('catches a value typed as a number, a plaintext value beside encrypted ones, and a Secret nested in a list', () => {
    const files = new Map([
      ['secrets/local/broker/pin.template.yaml', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: pin\nstringData:\n  pin: 1234\n'],
      ['secrets/local/broker/users.sops.yaml', `apiVersion: v1\nkind: Secret\nmetadata:\n  name: users\nstringData:\n  a: ${ENC}\n  b: added-by-hand\n${SOPS_METADATA}`],
      ['dist/local/extra.yaml', 'apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Secret\n    metadata:\n      name: nested\n    data:\n      token: dG9rZW4=\n'],
      ['keys/release.asc', PGP_KEY],
      ['keys/windows.ppk', PUTTY_KEY],
    ]);
    expect(scanForPlaintextSecrets(files)).toEqual([
      { file: 'secrets/local/broker/pin.template.yaml', problem: 'Secret pin holds pin in plaintext: encrypt it with sops' },
      { file: 'secrets/local/broker/users.sops.yaml', problem: 'Secret users holds b in plaintext: encrypt it with sops' },
      { file: 'dist/local/extra.yaml', problem: 'Secret nested holds token in plaintext: encrypt it with sops' },
      { file: 'keys/release.asc', problem: 'contains a PGP private key' },
      { file: 'keys/windows.ppk', problem: 'contains a PuTTY private key' },
    ]);
  });

  it('fails `npm run secrets -- scan` on a filled-in template git would commit, and skips what .gitignore excludes', async () => {
    const template = fs.readFileSync(path.join(ROOT, 'secrets/local/database/database-admin.template.yaml'), 'utf8');
    const filled = template.replace(/: ""/, ': hunter2');
    expect(filled).not.toBe(template);
    const dir = gitRepository({
      '.gitignore': 'local-keys/\n',
      'secrets/local/database/database-admin.template.yaml': filled,
      'local-keys/keys.txt': AGE_KEY,
    });
    try {
      const result = await runInProcess(SECRETS, ['scan', '--root', dir]);
      expect(result.stderr).toBe('secrets/local/database/database-admin.template.yaml: Secret database-admin holds password in plaintext: encrypt it with sops\n');
      expect(result.stdout).toBe('2 files scanned, 1 with plaintext secret material\n');
      expect(result.status).toBe(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails `npm run secrets -- scan`, naming the file, when one appears', async () => {
    const dir = temporaryDirectory();
    try {
      fs.mkdirSync(path.join(dir, 'secrets'));
      fs.writeFileSync(path.join(dir, 'secrets', 'keys.txt'), AGE_KEY);
      const result = await runInProcess(SECRETS, ['scan', '--root', dir]);
      expect(result.stderr).toBe('secrets/keys.txt: contains an age secret key\n');
      expect(result.status).toBe(1);
      expect((await runInProcess(SECRETS, ['scan'])).status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('what the scan reads', () => {
  const plaintext = (name: string) => `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\nstringData:\n  password: hunter2\n`;

  it('reads every YAML or JSON file, whatever its name says: .yml, .json, a backup copy, no extension', () => {
    const files = new Map([
      ['deploy/secret.yml', plaintext('yml')],
      ['deploy/secret.json', JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'json' }, data: { token: 'dG9rZW4=' } }, null, 2)],
      ['deploy/secret.yaml.bak', plaintext('backup')],
      ['deploy/Secretfile', plaintext('no-extension')],
      // Not YAML or JSON by name, and no Kubernetes object: never parsed.
      ['docs/notes.md', plaintext('in-markdown')],
    ]);
    expect(scanForPlaintextSecrets(files)).toEqual([
      { file: 'deploy/secret.yml', problem: 'Secret yml holds password in plaintext: encrypt it with sops' },
      { file: 'deploy/secret.json', problem: 'Secret json holds token in plaintext: encrypt it with sops' },
      { file: 'deploy/secret.yaml.bak', problem: 'Secret backup holds password in plaintext: encrypt it with sops' },
      { file: 'deploy/Secretfile', problem: 'Secret no-extension holds password in plaintext: encrypt it with sops' },
    ]);
  });

  it('treats a duplicated key as a finding, naming the file and the line: the value kept may be the plaintext one', () => {
    const files = new Map([
      ['secrets/local/database/database-admin.sops.yaml', `apiVersion: v1\nkind: Secret\nmetadata:\n  name: database-admin\nstringData:\n  password: ${ENC}\n  password: hunter2\n${SOPS_METADATA}`],
      ['dist/local/extra.json', '{\n  "apiVersion": "v1",\n  "kind": "Secret",\n  "metadata": {"name": "twice"},\n  "data": {"token": "", "token": "dG9rZW4="}\n}\n'],
    ]);
    expect(scanForPlaintextSecrets(files)).toEqual([
      { file: 'secrets/local/database/database-admin.sops.yaml', problem: 'line 7: key "password" appears twice: a duplicated key can hide a plaintext value; remove one' },
      { file: 'secrets/local/database/database-admin.sops.yaml', problem: 'Secret database-admin holds password in plaintext: encrypt it with sops' },
      { file: 'dist/local/extra.json', problem: 'line 5: key "token" appears twice: a duplicated key can hide a plaintext value; remove one' },
      { file: 'dist/local/extra.json', problem: 'Secret twice holds token in plaintext: encrypt it with sops' },
    ]);
  });

  it('finds an encrypted file whose recipients or rule are not its environment\'s own in .sops.yaml', () => {
    const own = 'age1w02pum02c9lrdwpmdfcaews3kzlwxjwfjyzqpmsw2hkr59zsza5qhu5jhh';
    const extra = 'age1eu5kex9ghyfnjxvmewgdwf0l5k8um7x5ckrurv6sp9zqdah7aspq708a99';
    const encrypted = (recipients: readonly string[]) =>
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: database-admin\nstringData:\n  password: ${ENC}\nsops:\n  age:\n${recipients.map((recipient) => `    - recipient: ${recipient}\n      enc: x\n`).join('')}  encrypted_regex: ^(data|stringData)$\n  mac: ${ENC}\n  version: 3.13.3\n`;
    const ownRule = `  - path_regex: secrets/local/.+\\.sops\\.yaml$\n    encrypted_regex: ^(data|stringData)$\n    age: ${own}\n`;
    const shadowed = new Map([
      ['.sops.yaml', `creation_rules:\n  - path_regex: secrets/\n    encrypted_regex: ^(data|stringData)$\n    age: ${own},${extra}\n${ownRule}`],
      ['secrets/local/database/database-admin.sops.yaml', encrypted([own, extra])],
    ]);
    const findings = scanForPlaintextSecrets(shadowed);
    // The earlier rule names local's key too: one key per environment, and it shadows local's own.
    expect(findings.map((finding) => finding.file)).toEqual(['.sops.yaml', '.sops.yaml', 'secrets/local/database/database-admin.sops.yaml']);
    expect(findings[0]!.problem).toContain(`${own} is also the recipient of creation_rules[0] (path_regex "secrets/"), not local's rule: one key per environment`);
    expect(findings[1]!.problem).toContain('creation_rules[0] (path_regex "secrets/") matches secrets/local/database/database-admin.sops.yaml before local\'s own rule creation_rules[1]');
    expect(findings[2]!.problem).toBe(`encrypted for ${[own, extra].sort().join(', ')}; .sops.yaml names ${own} for local: run npm run secrets -- init local`);
    // The environment's own rule first, and the file encrypted for its key only: clean.
    expect(scanForPlaintextSecrets(new Map([['.sops.yaml', `creation_rules:\n${ownRule}`], ['secrets/local/database/database-admin.sops.yaml', encrypted([own])]]))).toEqual([]);
  });

  it('names a .sops.yaml that is empty, not a mapping or without a creation_rules list', () => {
    for (const [text, problem] of [
      ['', 'is empty; expected a mapping with creation_rules, a list of one rule per environment (docs/secrets.md)'],
      ['- path_regex: x\n', 'is a list; expected a mapping with creation_rules, a list of one rule per environment (docs/secrets.md)'],
      ['stores: {}\n', 'creation_rules is missing; expected a list of one rule per environment (docs/secrets.md)'],
      ['creation_rules: secrets/\n', 'creation_rules is a string; expected a list of one rule per environment (docs/secrets.md)'],
    ] as const) {
      expect(scanForPlaintextSecrets(new Map([['.sops.yaml', text]])), JSON.stringify(text)).toEqual([{ file: '.sops.yaml', problem }]);
    }
  });

  it('names a file too large to read, with the limit, instead of skipping it', async () => {
    const dir = gitRepository({ 'dump.yaml': `# ${'x'.repeat(MAX_SCANNED_FILE_BYTES)}\n` });
    try {
      const result = await runInProcess(SECRETS, ['scan', '--root', dir]);
      expect(result.stderr).toBe('dump.yaml: larger than 8 MiB (MAX_SCANNED_FILE_BYTES): not scanned; a file this large is no source or manifest, keep it out of git\n');
      expect(result.status).toBe(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run secrets', () => {
  it('checks that secrets/ is what the catalog says, naming the files that drifted and the retired KSOPS files', async () => {
    expect((await runInProcess(SECRETS, ['check'])).stdout).toBe('secrets/ matches the catalog\n');
    const dir = temporaryDirectory();
    try {
      fs.cpSync(path.join(ROOT, 'secrets'), path.join(dir, 'secrets'), { recursive: true });
      fs.cpSync(path.join(ROOT, '.sops.yaml'), path.join(dir, '.sops.yaml'));
      fs.rmSync(path.join(dir, 'secrets', 'staging', 'monitoring', 'chat-webhook.template.yaml'));
      fs.writeFileSync(path.join(dir, 'secrets', 'local', 'webapp', 'kustomization.yaml'), 'generators: [./secret-generator.yaml]\n');
      const drifted = await runInProcess(SECRETS, ['check', '--root', dir]);
      expect(drifted.status).toBe(1);
      expect(drifted.stderr).toBe(
        [
          'secrets/ is not what the catalog says; run `npm run secrets -- scaffold` and commit:',
          '  - secrets/local/webapp/kustomization.yaml',
          '  - secrets/staging/monitoring/chat-webhook.template.yaml',
          '',
        ].join('\n'),
      );
      expect((await runInProcess(SECRETS, ['scaffold', '--root', dir])).status).toBe(0);
      expect((await runInProcess(SECRETS, ['check', '--root', dir])).status).toBe(0);
      expect(fs.existsSync(path.join(dir, 'secrets', 'local', 'webapp', 'kustomization.yaml'))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails check when the encrypted files do not hold what .sops.yaml promises (here: an empty .sops.yaml)', async () => {
    const dir = temporaryDirectory();
    try {
      fs.cpSync(path.join(ROOT, 'secrets'), path.join(dir, 'secrets'), { recursive: true });
      fs.cpSync(path.join(ROOT, '.sops.yaml'), path.join(dir, '.sops.yaml'));
      fs.writeFileSync(path.join(dir, '.sops.yaml'), '');
      const checked = await runInProcess(SECRETS, ['check', '--root', dir]);
      expect(checked.status).toBe(1);
      expect(checked.stderr).toContain('the encrypted Secrets are not what .sops.yaml promises');
      expect(checked.stderr).toContain('.sops.yaml');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('scaffolds only into a platform repository (one with .sops.yaml), never anywhere --root names', async () => {
    const dir = temporaryDirectory();
    try {
      const result = await runInProcess(SECRETS, ['scaffold', '--root', dir]);
      expect(result.status).toBe(1);
      expect(result.stderr.split('\n')[0]).toBe(`secrets: --root ${dir} has no .sops.yaml: scaffold writes secrets/ of a platform repository only (name its folder with --root)`);
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails check naming every template and encrypted file the catalog does not expect, which scaffold lists and leaves', async () => {
    const dir = temporaryDirectory();
    try {
      fs.cpSync(path.join(ROOT, 'secrets'), path.join(dir, 'secrets'), { recursive: true });
      fs.cpSync(path.join(ROOT, '.sops.yaml'), path.join(dir, '.sops.yaml'));
      // What a removed application leaves behind (no catalog names these Secrets).
      const leftovers = [
        'secrets/local/broker/removed-app-broker-user.sops.yaml',
        'secrets/local/database/removed-app-sql-login.sops.yaml',
        'secrets/staging/database/removed-app-sql-login.template.yaml',
      ];
      for (const file of leftovers) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), 'kind: Secret\n');
      }
      fs.writeFileSync(path.join(dir, 'secrets', 'local', 'broker', 'notes.txt'), 'not a catalog file\n');
      const checked = await runInProcess(SECRETS, ['check', '--root', dir]);
      expect(checked.status).toBe(1);
      expect(checked.stderr).toBe(
        [
          'secrets/ holds files the catalog does not expect (they would still sync); remove them (git rm) and commit:',
          ...leftovers.map((file) => `  - ${file}`),
          '',
        ].join('\n'),
      );
      const scaffolded = await runInProcess(SECRETS, ['scaffold', '--root', dir]);
      expect(scaffolded.status).toBe(0);
      expect(scaffolded.stdout).toContain(
        ['the catalog no longer expects these files; remove them (git rm) and commit:', ...leftovers.map((file) => `  - ${file}`), ''].join('\n'),
      );
      for (const file of leftovers) expect(fs.existsSync(path.join(dir, file))).toBe(true);
      for (const file of leftovers) fs.rmSync(path.join(dir, file));
      expect((await runInProcess(SECRETS, ['check', '--root', dir])).status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('checks secrets/ of the project it runs on by default, not of the current folder', async () => {
    const project = dataCopy();
    try {
      fs.cpSync(path.join(ROOT, 'secrets'), path.join(project, 'secrets'), { recursive: true });
      fs.rmSync(path.join(project, 'secrets', 'staging', 'monitoring', 'chat-webhook.template.yaml'));
      const result = await runInProcess(SECRETS, ['check'], project);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('  - secrets/staging/monitoring/chat-webhook.template.yaml\n');
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  });

  it('lists the encrypted files that do not exist yet, and no longer one that does', async () => {
    const dir = temporaryDirectory();
    try {
      fs.cpSync(path.join(ROOT, 'secrets'), path.join(dir, 'secrets'), { recursive: true, filter: (source) => !source.endsWith('.sops.yaml') });
      const all = (await runInProcess(SECRETS, ['missing', '--root', dir])).stdout.trim().split('\n');
      expect(all).toContain('secrets/production/database/database-admin.sops.yaml');
      expect(all).toContain('secrets/local/monitoring/on-call-webhook.sops.yaml');
      fs.writeFileSync(path.join(dir, 'secrets/local/monitoring/on-call-webhook.sops.yaml'), 'kind: Secret\n');
      const rest = (await runInProcess(SECRETS, ['missing', '--root', dir])).stdout.trim().split('\n');
      expect(rest).toEqual(all.filter((file) => file !== 'secrets/local/monitoring/on-call-webhook.sops.yaml'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run secrets: each subcommand its own options', () => {
  const firstLine = (text: string) => text.split('\n')[0];

  it('prints the usage of every subcommand on --help, and of one after its word', async () => {
    const all = await runInProcess(SECRETS, ['--help']);
    expect(all.status).toBe(0);
    for (const word of ['init', 'rotate-keys', 'scaffold', 'check', 'missing', 'scan']) expect(all.stdout).toContain(`\n  ${word} `);
    const init = await runInProcess(SECRETS, ['init', '--help']);
    expect(init.status).toBe(0);
    expect(firstLine(init.stdout)).toBe('usage: npm run secrets -- init <environment> [options]');
    expect(init.stdout).toContain('--rotate-key');
    expect(init.stdout).not.toContain('--old-key-file');
  });

  it("refuses an option of another subcommand as unknown, with that subcommand's usage (exit 2), before touching anything", async () => {
    const dir = temporaryDirectory();
    try {
      const init = await runInProcess(SECRETS, ['init', 'local', '--root', dir, '--old-key-file', path.join(dir, 'old.key')]);
      expect(init.status).toBe(2);
      expect(firstLine(init.stderr)).toMatch(/^secrets: Unknown option '--old-key-file'/);
      expect(init.stderr).toContain('\nusage: npm run secrets -- init <environment> [options]\n');
      const rotate = await runInProcess(SECRETS, ['rotate-keys', 'local', '--root', dir, '--rotate', 'database-admin']);
      expect(rotate.status).toBe(2);
      expect(firstLine(rotate.stderr)).toMatch(/^secrets: Unknown option '--rotate'/);
      expect(rotate.stderr).toContain('\nusage: npm run secrets -- rotate-keys <environment> [options]\n');
      const scan = await runInProcess(SECRETS, ['scan', '--root', dir, '--key-file', path.join(dir, 'x.key')]);
      expect(scan.status).toBe(2);
      expect(firstLine(scan.stderr)).toMatch(/^secrets: Unknown option '--key-file'/);
      expect(scan.stderr).toContain('\nusage: npm run secrets -- scan [--root <dir>]\n');
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an environment where a subcommand takes none, a missing or unknown subcommand, and an option before it', async () => {
    const scaffold = await runInProcess(SECRETS, ['scaffold', 'staging']);
    expect(scaffold.status).toBe(2);
    expect(firstLine(scaffold.stderr)).toBe("secrets: Unexpected argument 'staging'. This command does not take positional arguments");
    expect(scaffold.stderr).toContain('\nusage: npm run secrets -- scaffold [--root <dir>]\n');
    const choices = 'init, rotate-keys, scaffold, check, missing or scan';
    expect(await runInProcess(SECRETS, [])).toMatchObject({ status: 2, stderr: expect.stringMatching(new RegExp(`^secrets: a command is required: ${choices}\nusage: npm run secrets -- <command>`)) });
    expect(await runInProcess(SECRETS, ['rotate'])).toMatchObject({ status: 2, stderr: expect.stringMatching(new RegExp(`^secrets: unknown command "rotate"; choose ${choices}\n`)) });
    expect(await runInProcess(SECRETS, ['--root', '.', 'scan'])).toMatchObject({ status: 2, stderr: expect.stringMatching(new RegExp(`^secrets: a command is required before any option: ${choices}\n`)) });
    const init = await runInProcess(SECRETS, ['init']);
    expect(init).toMatchObject({ status: 2, stderr: expect.stringMatching(/^secrets: init needs an environment \(local, testing, staging, production\)\n/) });
  });
});

describe('what sops runs with (issue 50, item 5)', () => {
  it('gives sops an allow-listed environment: the identities and its own HOME, nothing of the shell (no SOPS_AGE_SSH_PRIVATE_KEY_CMD, no PATH for age plugins)', () => {
    const dir = temporaryDirectory();
    try {
      const fake = path.join(dir, 'sops');
      // It reads its input whole, as sops does: a writer to a closed pipe would fail instead.
      fs.writeFileSync(fake, `#!/bin/sh\n/bin/cat > /dev/null\n/usr/bin/env > ${JSON.stringify(path.join(dir, 'env.txt'))}\n`, { mode: 0o755 });
      const home = path.join(dir, 'home');
      fs.mkdirSync(home);
      const saved = { ...process.env };
      Object.assign(process.env, { SOPS_AGE_SSH_PRIVATE_KEY_CMD: 'touch /tmp/pwned', SOPS_AGE_KEY_CMD: 'cat key', SOPS_EDITOR: 'vi', AWS_PROFILE: 'x' });
      try {
        new Sops({ sops: fake, ageKeygen: fake }, dir, 'AGE-SECRET-KEY-1TEST', home).decrypt('x.sops.yaml', 'a: 1\n');
      } finally {
        for (const name of ['SOPS_AGE_SSH_PRIVATE_KEY_CMD', 'SOPS_AGE_KEY_CMD', 'SOPS_EDITOR', 'AWS_PROFILE']) if (!(name in saved)) delete process.env[name];
      }
      const names = fs.readFileSync(path.join(dir, 'env.txt'), 'utf8').split('\n').filter((line) => line !== '').map((line) => line.slice(0, line.indexOf('=')));
      expect(names.filter((name) => !['PWD', 'SHLVL', '_', 'TMPDIR'].includes(name)).sort()).toEqual(['HOME', 'SOPS_AGE_KEY', 'XDG_CONFIG_HOME']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('init and rotate-keys take the release commands\' edit lock (issue 50, item 4)', () => {
  it.each([['init'], ['rotate-keys']])('refuses %s while another command holds the lock, naming it, with nothing written', async (subcommand) => {
    const dir = temporaryDirectory();
    try {
      fs.cpSync(path.join(ROOT, 'secrets'), path.join(dir, 'secrets'), { recursive: true });
      fs.cpSync(path.join(ROOT, '.sops.yaml'), path.join(dir, '.sops.yaml'));
      fs.mkdirSync(path.join(dir, EDIT_DIR));
      // This test's parent process runs: a lock it holds is a live holder's.
      fs.writeFileSync(path.join(dir, EDIT_DIR, 'lock.json'), JSON.stringify({ pid: process.ppid, command: 'secrets init' }));
      const before = fs.readFileSync(path.join(dir, '.sops.yaml'), 'utf8');
      const result = await runInProcess(SECRETS, [subcommand!, 'testing', '--root', dir, '--key-file', path.join(dir, '..', 'no-such.key')]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`another secrets init (process ${process.ppid}) is editing this project`);
      expect(fs.readFileSync(path.join(dir, '.sops.yaml'), 'utf8')).toBe(before);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('what the scan finds hidden (issue 50, item 5)', () => {
  const secret = (values: string, name = 'db') => `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\nstringData:\n${values}`;

  it('finds an age secret key written in lower case, or base64-encoded in either case', () => {
    const files = new Map([
      ['notes/lower.txt', `${AGE_KEY.toLowerCase()}\n`],
      ['ci/encoded.env', `SOPS_AGE_KEY_B64=${Buffer.from(`# created: 2026-11-23\n${AGE_KEY}\n`).toString('base64')}\n`],
      ['ci/encoded-lower.yaml', `key: ${Buffer.from(AGE_KEY.toLowerCase()).toString('base64')}\n`],
    ]);
    expect(scanForPlaintextSecrets(files)).toEqual([
      { file: 'notes/lower.txt', problem: 'contains an age secret key' },
      { file: 'ci/encoded.env', problem: 'contains an age secret key, base64-encoded' },
      { file: 'ci/encoded-lower.yaml', problem: 'contains an age secret key, base64-encoded' },
    ]);
  });

  it('finds a plaintext value under a secret-looking key of a Pulumi stack, and passes secure values and file names', () => {
    const stack = [
      'config:',
      '  platform-gitops-bootstrap:environment: staging',
      '  platform-gitops-bootstrap:sopsAgeKeyFile: ~/.config/platform-gitops/age/staging.key',
      '  platform-gitops-bootstrap:sopsAgeKey:',
      '    secure: v1:AAABAF5bYXNvbWV0aGluZw==',
      '  platform-gitops-bootstrap:registryPassword: hunter2',
      '  platform-gitops-bootstrap:repository:',
      '    deployToken: ghp_abc',
      '',
    ].join('\n');
    expect(scanForPlaintextSecrets(new Map([['Pulumi.staging.yaml', stack]]))).toEqual([
      { file: 'Pulumi.staging.yaml', problem: 'config platform-gitops-bootstrap:registryPassword is not a secure value: a secret-looking setting in plaintext; set it with pulumi config set --secret' },
      { file: 'Pulumi.staging.yaml', problem: 'config platform-gitops-bootstrap:repository.deployToken is not a secure value: a secret-looking setting in plaintext; set it with pulumi config set --secret' },
    ]);
  });

  it('finds a Secret inside a Helm template (.tpl) and inside a string of a ConfigMap', () => {
    const files = new Map([
      ['charts/app/templates/_secret.tpl', `{{- define "app.secret" -}}\n${secret('  password: hunter2\n  token: {{ .Values.token | quote }}\n', 'from-template')}{{- end }}\n`],
      ['dist/local/config.yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bundle\ndata:\n  extra.yaml: |\n${secret('  password: hunter2\n', 'in-configmap').replace(/^/gm, '    ')}\n`],
    ]);
    expect(scanForPlaintextSecrets(files)).toEqual([
      { file: 'charts/app/templates/_secret.tpl', problem: 'Secret from-template holds password in plaintext: encrypt it with sops' },
      { file: 'dist/local/config.yaml', problem: 'Secret in-configmap holds password in plaintext: encrypt it with sops' },
    ]);
  });

  it('finds a fake ENC[AES256_GCM,data:...] value: not sops\' envelope, or in a file sops did not encrypt (no MAC)', () => {
    const fake = 'ENC[AES256_GCM,data:hunter2]';
    const files = new Map([
      ['dist/local/fake.yaml', secret(`  password: ${fake}\n`)],
      ['dist/local/unsealed.yaml', secret(`  password: ${ENC}\n`, 'unsealed')],
      ['secrets/local/database/no-mac.sops.yaml', `${secret(`  password: ${ENC}\n`, 'no-mac')}sops:\n  version: 3.9.0\n`],
    ]);
    expect(scanForPlaintextSecrets(files)).toEqual([
      { file: 'dist/local/fake.yaml', problem: 'Secret db holds password with a value that is not sops\' (ENC[...] is sops\' envelope only in a file sops encrypted, with its MAC): encrypt it with sops' },
      { file: 'dist/local/unsealed.yaml', problem: 'Secret unsealed holds password with a value that is not sops\' (ENC[...] is sops\' envelope only in a file sops encrypted, with its MAC): encrypt it with sops' },
      { file: 'secrets/local/database/no-mac.sops.yaml', problem: 'Secret no-mac holds password with a value that is not sops\' (ENC[...] is sops\' envelope only in a file sops encrypted, with its MAC): encrypt it with sops' },
    ]);
  });
});
