import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectFiles, scanForPlaintextSecrets } from '../src/secrets/scan';
import { ROOT, runCli, temporaryDirectory } from './support';

// Built from pieces, so that this file itself holds no key material for the scan to find.
const PEM_KEY = ['-----BEGIN OPENSSH ', 'PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH ', 'PRIVATE KEY-----'].join('');
const AGE_KEY = ['AGE-SECRET-KEY-', '1QQPQ7Z8NX6E3KVGJ8N0MT5YQZS4L5XK8RXDWYUQ3Q9ZPJ9Q2Y3HSVZ7C8'].join('');

describe('no plaintext secret in git or dist/ (5.3)', () => {
  it('finds none in the project, dist/ and secrets/ included', () => {
    const files = projectFiles(ROOT);
    expect([...files.keys()].some((file) => file.startsWith('dist/'))).toBe(true);
    expect([...files.keys()].some((file) => file.startsWith('secrets/'))).toBe(true);
    expect(scanForPlaintextSecrets(files)).toEqual([]);
  });

  it('accepts key-only templates and SOPS-encrypted values', () => {
    const files = new Map([
      ['secrets/local/database/database-admin.template.yaml', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: database-admin\nstringData:\n  password: ""\n'],
      ['secrets/local/database/database-admin.sops.yaml', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: database-admin\nstringData:\n  password: ENC[AES256_GCM,data:Zm9v,iv:YmFy,tag:YmF6,type:str]\nsops:\n  version: 3.9.0\n'],
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

  it('fails `npm run secrets -- scan`, naming the file, when one appears', () => {
    const dir = temporaryDirectory();
    try {
      fs.mkdirSync(path.join(dir, 'secrets'));
      fs.writeFileSync(path.join(dir, 'secrets', 'keys.txt'), AGE_KEY);
      const result = runCli('cli/secrets', ['scan', '--root', dir]);
      expect(result.stderr).toBe('secrets/keys.txt: contains an age secret key\n');
      expect(result.status).toBe(1);
      expect(runCli('cli/secrets', ['scan']).status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run secrets', () => {
  it('checks that secrets/ is what the catalog says, naming the files that drifted', () => {
    expect(runCli('cli/secrets', ['check']).stdout).toBe('secrets/ matches the catalog\n');
    const dir = temporaryDirectory();
    try {
      fs.cpSync(path.join(ROOT, 'secrets'), path.join(dir, 'secrets'), { recursive: true });
      fs.rmSync(path.join(dir, 'secrets', 'staging', 'monitoring', 'chat-webhook.template.yaml'));
      const drifted = runCli('cli/secrets', ['check', '--root', dir]);
      expect(drifted.status).toBe(1);
      expect(drifted.stderr).toContain('  - secrets/staging/monitoring/chat-webhook.template.yaml');
      expect(runCli('cli/secrets', ['scaffold', '--root', dir]).status).toBe(0);
      expect(runCli('cli/secrets', ['check', '--root', dir]).status).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lists the encrypted files an operator still has to create', () => {
    const missing = runCli('cli/secrets', ['missing']).stdout.trim().split('\n');
    expect(missing).toContain('secrets/production/database/database-admin.sops.yaml');
    expect(missing).toContain('secrets/local/monitoring/on-call-webhook.sops.yaml');
  });
});
