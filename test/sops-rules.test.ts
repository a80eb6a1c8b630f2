import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CHART_WAVES } from '../src/contract/choices';
import { loadEnvironments } from '../src/environments';
import { checkEncryptedFiles } from '../src/secrets/encryption';
import { parseSopsConfig, ruleProblems } from '../src/secrets/sops-config';
import { expectedEncryptedFiles, secretsLayout } from '../src/secrets/layout';
import { ENVIRONMENT_ORDER, ROOT, temporaryDirectory } from './support';

interface CreationRule {
  readonly path_regex: string;
  readonly encrypted_regex: string;
  readonly age: string;
}

const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

/** Whether `text` is bech32 with a valid checksum under `prefix` (BIP 173: what age recipients are). */
function isBech32(text: string, prefix: string): boolean {
  if (!text.startsWith(`${prefix}1`)) return false;
  const data = [...text.slice(prefix.length + 1)].map((char) => BECH32_CHARSET.indexOf(char));
  if (data.length < 6 || data.includes(-1)) return false;
  const generators = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let checksum = 1;
  const expanded = [...[...prefix].map((c) => c.charCodeAt(0) >> 5), 0, ...[...prefix].map((c) => c.charCodeAt(0) & 31), ...data];
  for (const value of expanded) {
    const top = checksum >> 25;
    checksum = ((checksum & 0x1ffffff) << 5) ^ value;
    generators.forEach((generator, bit) => {
      if ((top >> bit) & 1) checksum ^= generator;
    });
  }
  return checksum === 1;
}

describe('.sops.yaml creation rules (5.3)', () => {
  const rules = (parse(fs.readFileSync(path.join(ROOT, '.sops.yaml'), 'utf8')) as { creation_rules: CreationRule[] }).creation_rules;
  const environments = loadEnvironments();
  const encrypted = expectedEncryptedFiles(environments);
  const scaffold = [...secretsLayout(environments).keys()];
  // sops takes the first rule whose path_regex matches the file's path.
  const ruleFor = (file: string) => rules.find((rule) => new RegExp(rule.path_regex).test(file));

  it('encrypts each environment\'s files to that environment\'s key only', () => {
    expect(rules).toHaveLength(ENVIRONMENT_ORDER.length);
    for (const [index, environment] of ENVIRONMENT_ORDER.entries()) {
      const own = encrypted.filter((file) => file.startsWith(`secrets/${environment}/`));
      expect(own.length, environment).toBeGreaterThan(0);
      for (const file of own) expect(ruleFor(file), file).toBe(rules[index]);
    }
    expect(new Set(rules.map((rule) => rule.age)).size).toBe(rules.length);
  });

  it('matches no template or file outside secrets/, so nothing else is encrypted by accident', () => {
    for (const file of [...scaffold, 'dist/local/webapp.yaml', 'secrets/local/webapp/webapp-database.yaml']) {
      expect(ruleFor(file), file).toBeUndefined();
    }
  });

  it('encrypts only data and stringData, leaving names and types reviewable', () => {
    for (const rule of rules) expect(rule.encrypted_regex).toBe('^(data|stringData)$');
  });

  it('names one well-formed age public key per environment (a typo would only fail at `sops encrypt`)', () => {
    for (const rule of rules) expect(isBech32(rule.age, 'age'), rule.age).toBe(true);
    const typo = rules[0]!.age.slice(0, -1) + (rules[0]!.age.endsWith('q') ? 'p' : 'q');
    expect(isBech32(typo, 'age')).toBe(false);
  });

  it('holds every committed encrypted Secret as a full manifest encrypted for its own environment\'s recipient only', () => {
    const committed = encrypted.filter((file) => fs.existsSync(path.join(ROOT, file)));
    for (const file of committed) {
      const secret = parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));
      const rule = ruleFor(file)!;
      expect(secret.sops.age.map((entry: { recipient: string }) => entry.recipient), file).toEqual([rule.age]);
      expect(secret.sops.encrypted_regex, file).toBe(rule.encrypted_regex);
      // Names, namespace, type and sync wave stay readable; every value is sops' envelope.
      expect(secret.apiVersion).toBe('v1');
      expect(secret.kind).toBe('Secret');
      expect(path.basename(file)).toBe(`${secret.metadata.name}.sops.yaml`);
      expect(typeof secret.metadata.namespace).toBe('string');
      expect(secret.metadata.annotations['argocd.argoproj.io/sync-wave']).toBe(String(CHART_WAVES.secrets));
      for (const value of Object.values(secret.stringData)) expect(String(value), file).toMatch(/^ENC\[AES256_GCM,data:/);
    }
    // The same, as the secrets workflow checks it (the first matching rule, the recipients, every value).
    expect(checkEncryptedFiles(ROOT, environments)).toEqual([]);
  });
});

describe('one key per environment (issue 50, item 3)', () => {
  const text = fs.readFileSync(path.join(ROOT, '.sops.yaml'), 'utf8');
  const rules = (parse(text) as { creation_rules: CreationRule[] }).creation_rules;
  // production's rule given local's public key: the key that goes to laptops and the e2e.
  const shared = text.replace(rules[ENVIRONMENT_ORDER.indexOf('production')]!.age, rules[ENVIRONMENT_ORDER.indexOf('local')]!.age);
  const config = parseSopsConfig(shared).config!;

  it('refuses a recipient that another environment\'s rule uses, in both environments\' checks', () => {
    for (const [environment, other] of [['production', 'local'], ['local', 'production']] as const) {
      const problems = ruleProblems(config, environment, []);
      expect(problems.join('\n'), environment).toMatch(new RegExp(`also the recipient of creation_rules\\[${ENVIRONMENT_ORDER.indexOf(other)}\\].*one key per environment`));
    }
    expect(ruleProblems(config, 'staging', [])).toEqual([]);
  });

  it('refuses init\'s key when another environment\'s rule names its public key', () => {
    const local = rules[ENVIRONMENT_ORDER.indexOf('local')]!.age;
    const own = parseSopsConfig(text).config!;
    expect(ruleProblems(own, 'production', [], { settingRecipient: true, recipient: local }).join('\n')).toContain(`${local} is also the recipient of creation_rules[${ENVIRONMENT_ORDER.indexOf('local')}]`);
  });

  it('fails secrets check on such a .sops.yaml', () => {
    const dir = temporaryDirectory();
    try {
      fs.writeFileSync(path.join(dir, '.sops.yaml'), shared);
      expect(checkEncryptedFiles(dir, loadEnvironments()).join('\n')).toContain('one key per environment');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
