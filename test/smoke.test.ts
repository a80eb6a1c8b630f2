import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contractSteps, type SmokeChecks, type SmokeSettings } from '../src/smoke/contract';
import { runSmoke, type SmokeStep } from '../src/smoke/runner';
import { closedPort, type ContractServer, startContractServer, TEST_CREDENTIALS } from '../e2e/contract-server';
import { loadEnvironments } from '../src/environments';
import { SMOKE_TEST } from '../src/commands/smoke';
import { ROOT, runCli, runInProcess } from './support';

let server: ContractServer;
beforeAll(async () => {
  server = await startContractServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.fault = 'none';
  server.requests.length = 0;
});

function settings(overrides: Partial<SmokeSettings> = {}): SmokeSettings {
  return {
    baseUrl: server.baseUrl,
    ...TEST_CREDENTIALS,
    database: { host: '127.0.0.1', port: 1, user: 'sa', password: 'unused' },
    broker: { bootstrapServers: ['127.0.0.1:1'] },
    ...overrides,
  };
}

/** Database and broker checks that record their calls instead of connecting. */
function fakeDataChecks(failing?: 'database' | 'broker') {
  const calls: string[] = [];
  const checks: Partial<SmokeChecks> = {
    database: async () => {
      calls.push('database');
      if (failing === 'database') throw new Error('Login failed for user sa');
      return 'SELECT 1 returned 1';
    },
    broker: async () => {
      calls.push('broker');
      if (failing === 'broker') throw new Error('There is no leader for this topic-partition');
      return '1 broker(s)';
    },
  };
  return { calls, checks };
}

function statuses(result: Awaited<ReturnType<typeof runSmoke>>) {
  return result.steps.map((step) => `${step.name}:${step.status}`);
}

describe('the smoke runner against a local server implementing the contract', () => {
  it('runs health, login, declarations, database and broker in that order and passes', async () => {
    const { calls, checks } = fakeDataChecks();
    const result = await runSmoke(contractSteps(settings(), checks));
    expect(result.passed).toBe(true);
    expect(statuses(result)).toEqual([
      'health:passed',
      'login:passed',
      'declarations:passed',
      'database:passed',
      'broker:passed',
    ]);
    expect(server.requests).toEqual(['GET /health', 'POST /api/auth/login', 'GET /api/declarations']);
    expect(calls).toEqual(['database', 'broker']);
  });

  it('stops at health when /health returns an HTTP error status', async () => {
    server.fault = 'health-503';
    const { calls, checks } = fakeDataChecks();
    const result = await runSmoke(contractSteps(settings(), checks));
    expect(result.passed).toBe(false);
    expect(result.failed?.name).toBe('health');
    expect(result.failed?.detail).toBe('GET /health returned HTTP 503');
    expect(statuses(result)).toEqual(['health:failed', 'login:skipped', 'declarations:skipped', 'database:skipped', 'broker:skipped']);
    expect(server.requests).toEqual(['GET /health']);
    expect(calls).toEqual([]);
  });

  it('stops at login when the credentials are refused', async () => {
    server.fault = 'login-401';
    const { calls, checks } = fakeDataChecks();
    const result = await runSmoke(contractSteps(settings(), checks));
    expect(result.failed?.name).toBe('login');
    expect(result.failed?.detail).toBe('POST /api/auth/login returned HTTP 401');
    expect(server.requests).toEqual(['GET /health', 'POST /api/auth/login']);
    expect(calls).toEqual([]);
  });

  it('stops at login when the response carries no token', async () => {
    server.fault = 'login-no-token';
    const result = await runSmoke(contractSteps(settings(), fakeDataChecks().checks));
    expect(result.failed?.name).toBe('login');
    expect(result.failed?.detail).toContain('no "token" string');
    expect(server.requests).not.toContain('GET /api/declarations');
  });

  it('sends the login as JSON username and password, so wrong credentials fail the login step', async () => {
    const result = await runSmoke(contractSteps(settings({ password: 'wrong' }), fakeDataChecks().checks));
    expect(result.failed?.name).toBe('login');
  });

  it('stops at declarations when the protected call fails', async () => {
    server.fault = 'declarations-500';
    const { calls, checks } = fakeDataChecks();
    const result = await runSmoke(contractSteps(settings(), checks));
    expect(result.failed?.name).toBe('declarations');
    expect(result.failed?.detail).toBe('GET /api/declarations returned HTTP 500');
    expect(statuses(result).slice(3)).toEqual(['database:skipped', 'broker:skipped']);
    expect(calls).toEqual([]);
  });

  it('stops at database when the database check fails, without calling the broker', async () => {
    const { calls, checks } = fakeDataChecks('database');
    const result = await runSmoke(contractSteps(settings(), checks));
    expect(result.failed?.name).toBe('database');
    expect(result.failed?.detail).toBe('Login failed for user sa');
    expect(calls).toEqual(['database']);
    expect(statuses(result)).toEqual(['health:passed', 'login:passed', 'declarations:passed', 'database:failed', 'broker:skipped']);
  });

  it('reports broker as the failed step when the broker check fails', async () => {
    const { calls, checks } = fakeDataChecks('broker');
    const result = await runSmoke(contractSteps(settings(), checks));
    expect(result.failed?.name).toBe('broker');
    expect(calls).toEqual(['database', 'broker']);
  });

  it('fails a step that exceeds its timeout and runs nothing after it', async () => {
    server.fault = 'health-hangs';
    const result = await runSmoke(contractSteps(settings({ timeoutsMs: { health: 200 } }), fakeDataChecks().checks));
    expect(result.failed?.name).toBe('health');
    expect(result.failed?.detail).toBe('timed out after 200 ms');
    expect(server.requests).toEqual(['GET /health']);
  });

  it('aborts a timed-out step through its signal', async () => {
    let aborted = false;
    const step: SmokeStep = {
      name: 'slow',
      description: 'never finishes',
      timeoutMs: 50,
      run: (signal) =>
        new Promise<string>(() => {
          signal.addEventListener('abort', () => (aborted = true));
        }),
    };
    const result = await runSmoke([step]);
    expect(result.failed?.detail).toBe('timed out after 50 ms');
    expect(aborted).toBe(true);
  });
});

describe('the real database and broker checks', () => {
  it('reports a refused SQL Server connection as a failure of the database step', async () => {
    const port = await closedPort();
    const { checks } = fakeDataChecks();
    const { database: _real, ...httpAndBroker } = checks;
    const result = await runSmoke(
      contractSteps(settings({ database: { host: '127.0.0.1', port, user: 'sa', password: 'x' }, timeoutsMs: { database: 5000 } }), httpAndBroker),
    );
    expect(result.failed?.name).toBe('database');
    expect(result.failed?.detail).toMatch(/ECONNREFUSED|Failed to connect/);
    expect(result.steps.at(-1)?.status).toBe('skipped');
  });

  it('reports a refused Kafka connection as a failure of the broker step', async () => {
    const port = await closedPort();
    const { checks } = fakeDataChecks();
    const { broker: _real, ...httpAndDatabase } = checks;
    const result = await runSmoke(
      contractSteps(settings({ broker: { bootstrapServers: [`127.0.0.1:${port}`] }, timeoutsMs: { broker: 5000 } }), httpAndDatabase),
    );
    expect(result.failed?.name).toBe('broker');
    expect(result.failed?.detail).toMatch(/ECONNREFUSED|Connection error|connect/i);
  });
});

describe('npm run smoke', () => {
  const env = async () => ({
    SMOKE_USERNAME: TEST_CREDENTIALS.username,
    SMOKE_PASSWORD: TEST_CREDENTIALS.password,
    DATABASE_HOST: '127.0.0.1',
    DATABASE_PORT: String(await closedPort()),
    DATABASE_USER: 'sa',
    DATABASE_PASSWORD: 'x',
    KAFKA_BOOTSTRAP_SERVERS: `127.0.0.1:${await closedPort()}`,
  });

  it('exits 1 naming the database step when SQL Server refuses the connection', async () => {
    const result = await runInProcess(SMOKE_TEST, ['--base-url', server.baseUrl], ROOT, await env());
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('PASS health');
    expect(result.stdout).toContain('PASS declarations');
    expect(result.stdout).toContain('FAIL database');
    expect(result.stdout).toContain('SKIP broker');
    expect(result.stderr).toContain('Smoke test failed at step "database"');
    expect(result.stdout).not.toContain('All smoke tests passed');
  });

  // The one spawn of the entry point: argv, the usage error, exit 2, no stack trace.
  it('refuses to start, listing every missing variable, when credentials are not set', () => {
    const result = runCli('smoke', ['--base-url', server.baseUrl], {
      env: { SMOKE_USERNAME: '', SMOKE_PASSWORD: '', DATABASE_HOST: '', DATABASE_USER: '', DATABASE_PASSWORD: '' },
    });
    expect(result.status).toBe(2);
    for (const name of ['SMOKE_USERNAME', 'SMOKE_PASSWORD', 'DATABASE_HOST', 'DATABASE_USER', 'DATABASE_PASSWORD']) {
      expect(result.stderr).toContain(`${name} is not set`);
    }
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("takes the application's url from --env and --app, and refuses --app alone", async () => {
    const environment = loadEnvironments()[0]!;
    const application = environment.applications[0]!;
    // No credentials: the settings are refused after the url was taken (not a url problem).
    const result = await runInProcess(SMOKE_TEST, ['--env', environment.name, '--app', application.name], ROOT, { SMOKE_USERNAME: '', SMOKE_PASSWORD: '' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('SMOKE_USERNAME is not set');
    expect(result.stderr).not.toContain('--base-url <url> is required');
    const alone = await runInProcess(SMOKE_TEST, ['--app', application.name]);
    expect(alone.status).toBe(2);
    expect(alone.stderr).toContain('--app needs --env <environment>');
  });

  it('refuses a base URL that is not http or https', async () => {
    const result = await runInProcess(SMOKE_TEST, ['--base-url', 'ftp://example.com']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--base-url "ftp://example.com" must start with http:// or https://');
  });
});
