import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_ORDER } from '../src/environments';
import { refusalsAgainstCommittedDist } from './support';

/** Synthesize with broken files; return the problems, asserting dist/ is untouched. */
const refusedProblems = refusalsAgainstCommittedDist();

describe('a bad environment value is refused with environment, field, value and rule, and dist/ is untouched', () => {
  it.each([
    ['latest', 'testing: image.tag "latest" must look like v<major>.<minor>.<patch>'],
    ['1.2.3', 'testing: image.tag "1.2.3" must look like v<major>.<minor>.<patch>'],
    ['v1.2', 'testing: image.tag "v1.2" must look like v<major>.<minor>.<patch>'],
    ['v01.2.3', 'testing: image.tag "v01.2.3" must look like v<major>.<minor>.<patch>'],
    [
      'sha256:0f2b9a6d1c3e',
      'testing: image.tag "sha256:0f2b9a6d1c3e" must look like v<major>.<minor>.<patch>',
    ],
    ['v1.2.3@sha256:0f2b9a6d1c3e', 'testing: image.tag "v1.2.3@sha256:0f2b9a6d1c3e" must look like v<major>.<minor>.<patch>'],
  ])('refuses the image tag %s', (tag, message) => {
    expect(refusedProblems((files) => (files.testing.image.tag = tag))).toEqual([message]);
  });

  it.each([
    [0, 'local: application.replicas 0 must be at least 1'],
    [-2, 'local: application.replicas -2 must be at least 1'],
    [1.5, 'local: application.replicas 1.5 must be a whole number'],
  ])('refuses %s replicas', (replicas, message) => {
    expect(refusedProblems((files) => (files.local.application.replicas = replicas))).toEqual([message]);
  });

  it('refuses an address that is not a URL', () => {
    expect(refusedProblems((files) => (files.staging.application.url = 'webapp.staging.platform.example.com'))).toEqual([
      'staging: application.url "webapp.staging.platform.example.com" must be an absolute URL such as "https://app.example.com"',
    ]);
  });

  it('refuses an address served over plain HTTP', () => {
    expect(refusedProblems((files) => (files.staging.application.url = 'http://webapp.staging.platform.example.com'))).toEqual([
      'staging: application.url "http://webapp.staging.platform.example.com" must use https:// (the application is served over TLS only)',
    ]);
  });

  it('refuses an address with a path', () => {
    expect(refusedProblems((files) => (files.staging.application.url = 'https://webapp.staging.platform.example.com/app'))).toEqual([
      'staging: application.url "https://webapp.staging.platform.example.com/app" must be an origin only, with no path, query or trailing "/"',
    ]);
  });

  it('refuses a host with capitals or a port', () => {
    expect(refusedProblems((files) => (files.staging.application.url = 'https://webapp.example.com:8443'))).toEqual([
      'staging: application.url "https://webapp.example.com:8443" must name a lower-case DNS host with no port or credentials',
    ]);
  });

  it('refuses the same host in two environments', () => {
    expect(
      refusedProblems((files) => (files.testing.application.url = 'https://webapp.local.platform.example.com')),
    ).toEqual([
      'testing: application.url "https://webapp.local.platform.example.com" must be unique: local already serves webapp.local.platform.example.com',
    ]);
  });

  it('refuses an unknown delivery strategy', () => {
    expect(refusedProblems((files) => (files.testing.strategy = { type: 'bluegreen' }))).toEqual([
      'testing: strategy.type "bluegreen" must be one of rolling, blue-green, canary',
    ]);
  });

  it('refuses limits below requests, naming each resource', () => {
    expect(
      refusedProblems((files) => {
        files.production.application.resources.limits = { cpu: '250m', memory: '256Mi' };
      }),
    ).toEqual([
      'production: application.resources.limits.cpu "250m" must not be below requests.cpu "500m"',
      'production: application.resources.limits.memory "256Mi" must not be below requests.memory "512Mi"',
    ]);
  });

  it('refuses a quantity it cannot read', () => {
    expect(refusedProblems((files) => (files.local.application.resources.requests.memory = '128MB'))).toEqual([
      'local: application.resources.requests.memory "128MB" must be a positive memory quantity in Mi or Gi such as "256Mi" or "1Gi"',
    ]);
  });

  it('refuses a missing registry', () => {
    expect(refusedProblems((files) => delete files.staging.image.registry)).toEqual([
      'staging: image.registry is required and must be a string',
    ]);
  });

  it('refuses a registry written as a URL', () => {
    expect(refusedProblems((files) => (files.staging.image.registry = 'https://registry.example.com'))).toEqual([
      'staging: image.registry "https://registry.example.com" must be a registry host such as "registry.example.com" (no scheme, no path)',
    ]);
  });

  it('refuses a misspelt field instead of dropping it', () => {
    expect(refusedProblems((files) => (files.local.application.replcas = 2))).toEqual([
      'local: application: unknown field "replcas" (the schema does not name it; check the spelling)',
    ]);
  });

  it('refuses a planned production set to sync automatically', () => {
    expect(refusedProblems((files) => (files.production.autoSync = true))).toEqual([
      'production: autoSync true must be false while status is "planned" (a planned environment is never synced automatically)',
    ]);
  });

  it('refuses a blue-green active unit that is not rendered', () => {
    expect(refusedProblems((files) => (files.staging.strategy.blueGreen.active = 'green'))).toEqual([
      'staging: strategy.blueGreen.active "green" is not one of the rendered units (blue)',
    ]);
  });

  it('refuses a blue-green unit without a tag', () => {
    expect(refusedProblems((files) => (files.staging.strategy.blueGreen.units.green = {}))).toEqual([
      'staging: strategy.blueGreen.units.green.tag is required and must be a string',
    ]);
  });

  it('refuses an image.tag beside blue-green units, which would be ignored', () => {
    expect(refusedProblems((files) => (files.staging.image.tag = 'v1.4.2'))).toEqual([
      'staging: image.tag "v1.4.2" must be left out with the blue-green strategy: each unit in strategy.blueGreen.units carries its tag',
    ]);
  });

  it('refuses a file whose name differs from its key', () => {
    expect(refusedProblems((files) => (files.testing.name = 'test'))).toEqual([
      'testing: name "test" must equal the environment\'s key "testing"',
    ]);
  });

  it('lists every problem of every environment in one error', () => {
    const problems = refusedProblems((files) => {
      files.local.image.tag = 'latest';
      files.production.autoSync = true;
    });
    expect(problems).toEqual([
      'local: image.tag "latest" must look like v<major>.<minor>.<patch>',
      'production: autoSync true must be false while status is "planned" (a planned environment is never synced automatically)',
    ]);
  });
});

describe('the environment order is checked', () => {
  it('refuses an order that names an environment twice and leaves one out', () => {
    expect(refusedProblems(() => undefined, ['local', 'testing', 'testing', 'production'])).toEqual([
      'order: "testing" appears more than once in the environment order',
      'order: environment "staging" is missing from the environment order',
    ]);
  });

  it('refuses an order naming an environment that has no file', () => {
    expect(refusedProblems(() => undefined, ['local', 'testing', 'staging', 'production', 'qa'])).toEqual([
      'order: "qa" has no environment file in src/environments',
    ]);
  });

  it('refuses a live environment promoted after the planned one', () => {
    expect(refusedProblems(() => undefined, ['local', 'testing', 'production', 'staging'])).toEqual([
      'order: live environment "staging" must not come after planned environment "production" (promotion follows the order)',
    ]);
  });

  it('exports the contract order: local, testing, staging, production', () => {
    expect(ENVIRONMENT_ORDER).toEqual(['local', 'testing', 'staging', 'production']);
  });
});
