import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ENVIRONMENT_ORDER, environmentNamed, loadEnvironments } from '../src/environments';
import { ConfigError, UsageError } from '../src/base/errors';
import { valuesJsonSchemas } from '../src/environments/json-schema';
import { applicationValuesPath, ENVIRONMENT_VALUES_FILE, readValuesTexts, schemaModeline, ValuesFile } from '../src/environments/values-file';
import { projectEnvironments, refusalsAgainstCommittedDist, ROOT } from './support';

/** Synthesize with broken files; return the problems, asserting dist/ is untouched. */
const refusedProblems = refusalsAgainstCommittedDist();

describe('a bad environment value is refused with environment, field, value and rule, and dist/ is untouched', () => {
  it.each([
    ['latest', 'src/environments/testing/webapp.yaml: image.tag "latest" must look like v<major>.<minor>.<patch>'],
    ['1.2.3', 'src/environments/testing/webapp.yaml: image.tag "1.2.3" must look like v<major>.<minor>.<patch>'],
    ['v1.2', 'src/environments/testing/webapp.yaml: image.tag "v1.2" must look like v<major>.<minor>.<patch>'],
    ['v01.2.3', 'src/environments/testing/webapp.yaml: image.tag "v01.2.3" must look like v<major>.<minor>.<patch>'],
    [
      'sha256:0f2b9a6d1c3e',
      'src/environments/testing/webapp.yaml: image.tag "sha256:0f2b9a6d1c3e" must look like v<major>.<minor>.<patch>',
    ],
    ['v1.2.3@sha256:0f2b9a6d1c3e', 'src/environments/testing/webapp.yaml: image.tag "v1.2.3@sha256:0f2b9a6d1c3e" must look like v<major>.<minor>.<patch>'],
  ])('refuses the image tag %s', (tag, message) => {
    expect(refusedProblems((files) => (files.testing.webapp.image.tag = tag))).toEqual([message]);
  });

  it.each([
    [0, 'src/environments/local/webapp.yaml: replicas 0 must be at least 1'],
    [-2, 'src/environments/local/webapp.yaml: replicas -2 must be at least 1'],
    [1.5, 'src/environments/local/webapp.yaml: replicas 1.5 must be a whole number'],
  ])('refuses %s replicas', (replicas, message) => {
    expect(refusedProblems((files) => (files.local.webapp.replicas = replicas))).toEqual([message]);
  });

  it('refuses an address that is not a URL', () => {
    expect(refusedProblems((files) => (files.staging.webapp.url = 'webapp.staging.platform.example.com'))).toEqual([
      'src/environments/staging/webapp.yaml: url "webapp.staging.platform.example.com" must be an absolute URL such as "https://app.example.com"',
    ]);
  });

  it('refuses an address served over plain HTTP', () => {
    expect(refusedProblems((files) => (files.staging.webapp.url = 'http://webapp.staging.platform.example.com'))).toEqual([
      'src/environments/staging/webapp.yaml: url "http://webapp.staging.platform.example.com" must use https:// (the application is served over TLS only)',
    ]);
  });

  it('refuses an address with a path', () => {
    expect(refusedProblems((files) => (files.staging.webapp.url = 'https://webapp.staging.platform.example.com/app'))).toEqual([
      'src/environments/staging/webapp.yaml: url "https://webapp.staging.platform.example.com/app" must be an origin only, with no path, query or trailing "/"',
    ]);
  });

  it('refuses a host with capitals or a port', () => {
    expect(refusedProblems((files) => (files.staging.webapp.url = 'https://webapp.example.com:8443'))).toEqual([
      'src/environments/staging/webapp.yaml: url "https://webapp.example.com:8443" must name a lower-case DNS host with no port or credentials',
    ]);
  });

  it('refuses the same host in two environments', () => {
    expect(
      refusedProblems((files) => (files.testing.webapp.url = 'https://webapp.local.platform.example.com')),
    ).toEqual([
      'src/environments/testing/webapp.yaml: url "https://webapp.local.platform.example.com" must be unique: src/environments/local/webapp.yaml already serves webapp.local.platform.example.com',
    ]);
  });

  it('refuses an unknown delivery strategy', () => {
    expect(refusedProblems((files) => (files.testing.webapp.strategy = { type: 'bluegreen' }))).toEqual([
      'src/environments/testing/webapp.yaml: strategy.type "bluegreen" must be one of rolling, blue-green, canary',
    ]);
  });

  it('refuses limits below requests, naming each resource', () => {
    expect(
      refusedProblems((files) => {
        files.production.webapp.resources.limits = { cpu: '250m', memory: '256Mi' };
      }),
    ).toEqual([
      'src/environments/production/webapp.yaml: resources.limits.cpu "250m" must not be below requests.cpu "500m"',
      'src/environments/production/webapp.yaml: resources.limits.memory "256Mi" must not be below requests.memory "512Mi"',
    ]);
  });

  it('refuses a quantity it cannot read', () => {
    expect(refusedProblems((files) => (files.local.webapp.resources.requests.memory = '128MB'))).toEqual([
      'src/environments/local/webapp.yaml: resources.requests.memory "128MB" must be a positive memory quantity in Mi or Gi such as "256Mi" or "1Gi"',
    ]);
  });

  it('refuses a missing registry', () => {
    expect(refusedProblems((files) => delete files.staging.webapp.image.registry)).toEqual([
      'src/environments/staging/webapp.yaml: image.registry is required and must be a string',
    ]);
  });

  it('refuses a registry written as a URL', () => {
    expect(refusedProblems((files) => (files.staging.webapp.image.registry = 'https://registry.example.com'))).toEqual([
      'src/environments/staging/webapp.yaml: image.registry "https://registry.example.com" must be a registry host such as "registry.example.com" or "registry.example.com:5000" (no scheme, no path; DNS labels of at most 63 characters, 253 in all; a port 1-65535)',
    ]);
  });

  it('refuses a misspelt field instead of dropping it', () => {
    expect(refusedProblems((files) => (files.local.webapp.replcas = 2))).toEqual([
      'src/environments/local/webapp.yaml: unknown field "replcas" (the schema does not name it; check the spelling)',
    ]);
  });

  it('refuses a planned production set to sync automatically', () => {
    expect(refusedProblems((files) => (files.production.environment.autoSync = true))).toEqual([
      'src/environments/production/environment.yaml: autoSync true must be false while status is "planned" (a planned environment is never synced automatically)',
    ]);
  });

  it('refuses a blue-green active unit that is not rendered', () => {
    expect(refusedProblems((files) => (files.staging.webapp.strategy.blueGreen = { active: 'green', units: { blue: { tag: 'v1.0.0' } } }))).toEqual([
      'src/environments/staging/webapp.yaml: strategy.blueGreen.active "green" is not one of the rendered units (blue)',
    ]);
  });

  it('refuses a blue-green unit without a tag', () => {
    expect(refusedProblems((files) => (files.staging.webapp.strategy.blueGreen = { active: 'blue', units: { blue: { tag: 'v1.0.0' }, green: {} } }))).toEqual([
      'src/environments/staging/webapp.yaml: strategy.blueGreen.units.green.tag is required and must be a string',
    ]);
  });

  it('refuses an image.tag beside blue-green units, which would be ignored', () => {
    expect(refusedProblems((files) => (files.staging.webapp.image.tag = 'v1.4.2'))).toEqual([
      'src/environments/staging/webapp.yaml: image.tag "v1.4.2" must be left out with the blue-green strategy: each unit in strategy.blueGreen.units carries its tag',
    ]);
  });

  it('lists every problem of every environment in one error', () => {
    const problems = refusedProblems((files) => {
      files.local.webapp.image.tag = 'latest';
      files.production.environment.autoSync = true;
    });
    expect(problems).toEqual([
      'src/environments/local/webapp.yaml: image.tag "latest" must look like v<major>.<minor>.<patch>',
      'src/environments/production/environment.yaml: autoSync true must be false while status is "planned" (a planned environment is never synced automatically)',
    ]);
  });
});

describe('the values files', () => {
  it('refuses an application name whose derived names exceed Kubernetes limits, naming the longest that fits', () => {
    const name = 'a-valid-looking-application-name-of-fifty-six-characters';
    expect(name).toHaveLength(56);
    const problems = refusedProblems((files) => {
      files.testing[name] = files.testing.webapp;
      delete files.testing.webapp;
    });
    expect(problems).toEqual([
      `src/environments/testing/${name}.yaml: (file name) "${name}" has 56 characters; at most 51 fit: it derives "${name}-broker-user" (its broker user's password Secret), 68 characters, over the 63 Kubernetes allows in a name or label value`,
    ]);
  });

  it('names the file and the line of each problem, and of a YAML syntax error', () => {
    const texts = readValuesTexts(ROOT);
    const file = applicationValuesPath('testing', projectEnvironments().testing!.applications[0]!.name);
    const original = texts.get(file)!;
    const line = original.split('\n').findIndex((text) => /^\s+tag: /.test(text)) + 1;
    const broken = new ValuesFile(file, original).edited((document) => document.setIn(['image', 'tag'], 'latest'));
    expect(() => loadEnvironments(new Map([...texts, [file, broken]]))).toThrow(
      `${file}:${line}: image.tag "latest" must look like v<major>.<minor>.<patch>`,
    );
    const syntax = `${original}oops: [\n`;
    expect(() => loadEnvironments(new Map([...texts, [file, syntax]]))).toThrow(new RegExp(`${file}:\\d+: YAML syntax: `));
  });

  it('keeps every comment and line but the edited one when a command edits a file', () => {
    for (const [file, text] of readValuesTexts(ROOT)) {
      expect(new ValuesFile(file, text).edited(() => undefined)).toBe(text);
    }
  });

  it('starts each file with the yaml-language-server modeline of its JSON Schema', () => {
    for (const file of readValuesTexts(ROOT).keys()) {
      const kind = file.endsWith(`/${ENVIRONMENT_VALUES_FILE}`) ? 'environment' : 'application';
      expect(readValuesTexts(ROOT).get(file)!.split('\n')[0]).toBe(schemaModeline(kind));
    }
  });

  it('refuses a file of an environment folder that is not a .yaml values file, and a folder, naming each', () => {
    const texts = readValuesTexts(ROOT);
    const application = projectEnvironments().testing!.applications[0]!.name;
    const yml = `src/environments/testing/${application}-copy.yml`;
    expect(() => loadEnvironments(new Map([...texts, [yml, texts.get(applicationValuesPath('testing', application))!], ['src/environments/testing/extra/', '']]))).toThrow(
      [
        `${yml}:1: (file name) "${application}-copy.yml" must be <application>.yaml or ${ENVIRONMENT_VALUES_FILE}: an environment folder holds values files only, and any other file or folder would be ignored`,
        `src/environments/testing/extra/:1: (file name) "extra/" must be <application>.yaml or ${ENVIRONMENT_VALUES_FILE}: an environment folder holds values files only, and any other file or folder would be ignored`,
      ].join('\n  - '),
    );
  });

  it('reads every entry of an environment folder, so that a stray one is refused, and none beside the folders', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'values-'));
    try {
      fs.mkdirSync(path.join(root, 'src/environments/testing/extra'), { recursive: true });
      fs.writeFileSync(path.join(root, 'src/environments/testing/environment.yaml'), 'a: 1\n');
      fs.writeFileSync(path.join(root, 'src/environments/testing/webapp.yml'), 'b: 2\n');
      fs.writeFileSync(path.join(root, 'src/environments/application.schema.json'), '{}');
      expect([...readValuesTexts(root)]).toEqual([
        ['src/environments/testing/environment.yaml', 'a: 1\n'],
        ['src/environments/testing/extra/', ''],
        ['src/environments/testing/webapp.yml', 'b: 2\n'],
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses a link whose target does not exist or that loops, naming the file and the target, instead of failing on it', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'values-'));
    try {
      fs.mkdirSync(path.join(root, 'src/environments/testing'), { recursive: true });
      fs.writeFileSync(path.join(root, 'src/environments/testing/environment.yaml'), 'a: 1\n');
      fs.symlinkSync('../shared/billing.yaml', path.join(root, 'src/environments/testing/billing.yaml'));
      fs.symlinkSync('loop.yaml', path.join(root, 'src/environments/testing/loop.yaml'));
      const read = () => readValuesTexts(root);
      expect(read).toThrow(ConfigError);
      expect(read).toThrow(
        [
          'src/environments/testing/billing.yaml: a link to ../shared/billing.yaml, which does not exist; restore its target or remove the link',
          'src/environments/testing/loop.yaml: a link to loop.yaml, which cannot be followed (ELOOP); restore its target or remove the link',
        ].join('\n  - '),
      );
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('commits the JSON Schemas the zod schemas generate (npm run schemas)', () => {
    for (const [file, text] of valuesJsonSchemas()) expect(fs.readFileSync(path.join(ROOT, file), 'utf8')).toBe(text);
  });
});

describe('the environment an option names', () => {
  it('is found in the environments given or in the values files below a root, and an unknown name is a usage error naming the option', () => {
    const environments = loadEnvironments();
    expect(environmentNamed(environments, 'staging', '--to')).toBe(environments.find((environment) => environment.name === 'staging'));
    expect(environmentNamed(ROOT, 'staging').name).toBe('staging');
    for (const [source, option] of [[environments, '--from'], [ROOT, '--env']] as const) {
      const call = () => environmentNamed(source, 'qa', option);
      expect(call).toThrow(UsageError);
      expect(call).toThrow(`${option} "qa" is not an environment; choose one of ${ENVIRONMENT_ORDER.join(', ')}`);
    }
  });
});

describe('the environment order is checked', () => {
  it('refuses an order that names an environment twice and leaves one out', () => {
    expect(refusedProblems(() => undefined, ['local', 'testing', 'testing', 'production'])).toEqual([
      'order: "testing" appears more than once in the environment order',
      'src/environments/staging/: environment "staging" is missing from the environment order (local, testing, testing, production)',
    ]);
  });

  it('refuses an order naming an environment that has no file', () => {
    expect(refusedProblems(() => undefined, ['local', 'testing', 'staging', 'production', 'qa'])).toEqual([
      'src/environments/qa/environment.yaml: missing: every environment of the order has one',
    ]);
  });

  it('refuses a live environment promoted after the planned one', () => {
    expect(refusedProblems(() => undefined, ['local', 'testing', 'production', 'staging'])).toEqual([
      'src/environments/staging/environment.yaml: status "live" must not come after planned environment "production" (promotion follows the order)',
    ]);
  });

  it('exports the contract order: local, testing, staging, production', () => {
    expect(ENVIRONMENT_ORDER).toEqual(['local', 'testing', 'staging', 'production']);
  });
});
