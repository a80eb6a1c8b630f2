import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { VALIDATE } from '../src/commands/validate';
import { dataCopy } from './project-copy';
import { DIST, runCli, runInProcess, temporaryDirectory, projectEnvironments as projectEnvironmentsOf } from './support';

const SUMMARY = /^(\d+) objects? in (\d+) files? checked, (\d+) findings?, (\d+) exemptions?$/;

let copies: string[] = [];
afterEach(() => {
  for (const dir of copies) fs.rmSync(dir, { recursive: true, force: true });
  copies = [];
});

/** A copy of the committed dist/ to break. */
function distCopy(): string {
  const dir = temporaryDirectory('platform-gitops-gate-');
  copies.push(dir);
  fs.cpSync(DIST, dir, { recursive: true });
  return dir;
}

function appendDocument(file: string, object: unknown): void {
  fs.appendFileSync(file, `---\n${stringify(object)}`);
}

function lines(text: string): string[] {
  return text.trimEnd().split('\n');
}

describe('npm run validate', () => {
  // This test is how the gate runs in `npm test`: the committed dist/ must pass clean.
  it('passes the committed dist/ with zero findings', async () => {
    const result = await runInProcess(VALIDATE, []);
    expect(result.stderr).toBe('');
    const summary = lines(result.stdout).at(-1)!;
    const [, objects, files, findings] = SUMMARY.exec(summary) ?? [];
    expect(findings).toBe('0');
    expect(Number(files)).toBeGreaterThanOrEqual(4);
    expect(Number(objects)).toBeGreaterThan(Number(files));
    expect(result.status).toBe(0);
  });

  it('prints one line per finding with environment, file, object, rule and fix, then fails', async () => {
    const dir = distCopy();
    const file = path.join(dir, 'local', 'webapp.yaml');
    const text = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, text.replace('revisionHistoryLimit: 10', 'revisionHistoryLimit: 10\n  replcas: 2'));
    appendDocument(file, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'webapp' } });
    appendDocument(file, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'webapp' }, stringData: { password: 'x' } });

    const result = await runInProcess(VALIDATE, ['--dir', dir]);
    // The database's standing exemptions are listed too; this test is about the findings.
    expect(lines(result.stdout).filter((line) => !line.startsWith('exempt '))).toEqual([
      'local webapp.yaml Deployment/webapp: schema: spec.replcas: unknown field: the apps/v1 Deployment schema has no such field (misspelt or misplaced?)',
      'local webapp.yaml Widget/w: schema: (object): unknown kind example.com/v1 Widget: neither Kubernetes 1.35 nor 1.36 nor a CRD in schemas/crds defines it (check apiVersion and kind, or add the CRD)',
      'local webapp.yaml Secret/db: no-plaintext-secret: holds data or stringData in plain text: remove the Secret from the rendered output and provide it SOPS-encrypted, referenced by name',
      expect.stringMatching(/^\d+ objects in \d+ files checked, 3 findings, \d+ exemptions$/),
    ]);
    expect(result.status).toBe(1);
  });

  it('lists the exemptions in force beside the summary, and those that suppress nothing', async () => {
    const dir = distCopy();
    const app = projectEnvironmentsOf().staging!.applications[0]!;
    const file = path.join(dir, 'staging', `${app.name}.yaml`);
    // The active unit's root filesystem becomes writable, with an exemption that says why.
    const strategy = app.strategy;
    const unit = `${app.name}-${strategy.type === 'blue-green' ? strategy.blueGreen.active : 'blue'}`;
    const documents = fs.readFileSync(file, 'utf8').split('\n---\n');
    const blue = documents.findIndex((document) => document.includes(`name: ${unit}\n`) && document.startsWith('apiVersion: apps/v1'));
    documents[blue] = documents[blue]!
      .replace('readOnlyRootFilesystem: true', 'readOnlyRootFilesystem: false')
      .replace(
        `name: ${unit}\n`,
        [
          `name: ${unit}`,
          '  annotations:',
          '    policy.platform-gitops.io/exempt-probes: a worker',
          '    policy.platform-gitops.io/exempt-read-only-root-filesystem: writes its cache to /tmp\n',
        ].join('\n'),
      );
    fs.writeFileSync(file, documents.join('\n---\n'));
    const result = await runInProcess(VALIDATE, ['--dir', dir]);
    const output = lines(result.stdout);
    expect(output.filter((line) => line.startsWith(`exempt staging ${app.name}.yaml`))).toEqual([
      `exempt staging ${app.name}.yaml Deployment/${unit}: probes: "a worker" (suppresses nothing: remove it?)`,
      `exempt staging ${app.name}.yaml Deployment/${unit}: read-only-root-filesystem: "writes its cache to /tmp"`,
    ]);
    // Plus the database's one exemption per environment.
    expect(output.at(-1)).toMatch(/, 0 findings, 6 exemptions$/);
    expect(result.status).toBe(0);
  });

  it('reports a file that is not YAML as a finding', async () => {
    const dir = distCopy();
    fs.writeFileSync(path.join(dir, 'testing', 'broken.yaml'), 'kind: [unclosed\n');
    const result = await runInProcess(VALIDATE, ['--dir', dir]);
    expect(lines(result.stdout)[0]).toMatch(/^testing broken.yaml \(file\): schema: not valid YAML: /);
    expect(result.status).toBe(1);
  });

  it('refuses a folder that is no environment, naming it', async () => {
    const dir = distCopy();
    fs.mkdirSync(path.join(dir, 'qa'));
    const result = await runInProcess(VALIDATE, ['--dir', dir]);
    expect(result.stderr).toContain(`${path.join(dir, 'qa')}: no environment "qa" in src/environments`);
    expect(result.status).toBe(1);
  });

  it('validates dist/ of the project it runs on by default, not of the current folder', async () => {
    const project = dataCopy();
    try {
      fs.writeFileSync(path.join(project, 'dist', 'testing', 'broken.yaml'), 'kind: [unclosed\n');
      const result = await runInProcess(VALIDATE, [], project);
      expect(lines(result.stdout)[0]).toMatch(/^testing broken.yaml \(file\): schema: not valid YAML: /);
      expect(result.status).toBe(1);
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  });

  it('writes the report as JSON with --format json', async () => {
    const result = await runInProcess(VALIDATE, ['--format', 'json']);
    const report = JSON.parse(result.stdout);
    expect(report.findings).toEqual([]);
    expect(report.environments).toEqual(['local', 'production', 'staging', 'testing']);
    expect(report.summary).toMatch(SUMMARY);
    expect(result.status).toBe(0);
  });

  it('lists every rule with its reason with --rules', async () => {
    const result = await runInProcess(VALIDATE, ['--rules']);
    expect(lines(result.stdout).map((line) => line.slice(0, line.indexOf(':')))).toEqual([
      'probes',
      'resources',
      'run-as-non-root',
      'no-privilege-escalation',
      'drop-all-capabilities',
      'seccomp-runtime-default',
      'read-only-root-filesystem',
      'image-tag',
      'application-image',
      'service-selector',
      'route-backend',
      'certificate-issuer',
      'network-policy',
      'no-plaintext-secret',
      'pull-secret',
    ]);
    expect(result.status).toBe(0);
  });

  // The one spawn: the entry point itself parses argv and exits 2 on a usage error, without a stack trace.
  it('refuses an unknown format, run as a person would', () => {
    const result = runCli('validate', ['--format', 'xml']);
    expect(result.stderr).toContain('--format "xml" must be one of text, json');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.status).toBe(2);
  });
});
