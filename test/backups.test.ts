import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, describe, expect, it } from 'vitest';
import { DATABASE } from '../src/contract/choices';
import { ENVIRONMENT_ORDER, ROOT, committedObjects, findObject, projectEnvironments, temporaryDirectory } from './support';

// Convergence item 10: backups are kept to a bounded number, a failed backup pages
// someone, and the runbook pauses automated sync before scaling by hand.

const environments = projectEnvironments();
const folder = temporaryDirectory('platform-gitops-backups-');
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

/**
 * The files the rendered backup command writes on the given days: its `-Q "..."` argument run
 * through /bin/sh as the Job runs it, with a `date` that answers each day's epoch seconds (one
 * shell for every day, the argument expanded again on each).
 */
function backupFilesOn(command: string, days: readonly number[]): string[] {
  // Written once and never rewritten: the day comes in the environment, so no run can
  // execute a script that is being rewritten for the next day.
  const fakeDate = path.join(folder, 'date');
  if (!fs.existsSync(fakeDate)) fs.writeFileSync(fakeDate, '#!/bin/sh\necho "$FAKE_EPOCH_SECONDS"\n', { mode: 0o755 });
  const query = /-Q "(.*)"$/.exec(command)![1]!;
  const result = spawnSync('/bin/sh', ['-c', `for FAKE_EPOCH_SECONDS in $EPOCHS; do export FAKE_EPOCH_SECONDS; printf '%s\\n' "${query}"; done`], {
    env: { PATH: `${folder}:/usr/bin:/bin`, EPOCHS: days.map((day) => day * 86400 + 3600).join(' ') },
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  const lines = result.stdout.split('\n').slice(0, -1);
  expect(lines).toHaveLength(days.length);
  return lines.map((line) => /TO DISK = N'([^']+)'/.exec(line)![1]!);
}

describe.each(ENVIRONMENT_ORDER)('database backups in %s', (name) => {
  const environment = environments[name]!;
  const objects = committedObjects(name);
  const cron = findObject(objects, 'CronJob', 'mssql-backup');
  const command: string = cron.spec.jobTemplate.spec.template.spec.containers[0].command[2];

  // BACKUP ... WITH INIT overwrites the backup sets in the file (Microsoft, BACKUP
  // (Transact-SQL), "INIT": https://learn.microsoft.com/sql/t-sql/statements/backup-transact-sql):
  // writing to a name that repeats every `keep` days keeps `keep` files.
  it('keeps a bounded number of backups: one file per UTC day, the same name every keep days, overwritten', () => {
    expect(command).toContain('WITH CHECKSUM, INIT');
    const files = backupFilesOn(command, Array.from({ length: 30 }, (_, day) => 20_000 + day));
    expect(new Set(files).size).toBe(DATABASE.backup.keep);
    for (let day = 0; day + DATABASE.backup.keep < files.length; day += 1) expect(files[day + DATABASE.backup.keep]).toBe(files[day]);
    for (const file of files) expect(file.startsWith(`${DATABASE.backupPath}/${environment.applications[0]!.database.name}-`)).toBe(true);
  });

  it('pages the on-call engineer when the last scheduled backup has not succeeded', () => {
    const monitoring = committedObjects(name);
    const rule = monitoring
      .filter((o) => o.kind === 'PrometheusRule')
      .flatMap((o) => o.spec.groups.flatMap((g: any) => g.rules.map((r: any) => ({ ...r, namespace: o.metadata.namespace }))))
      .find((r) => r.alert === 'DatabaseBackupFailed');
    expect(rule).toBeDefined();
    // It watches the CronJob the database chart renders, by name and namespace.
    expect(rule.expr).toContain(`namespace="${cron.metadata.namespace}", cronjob="${cron.metadata.name}"`);
    expect(rule.namespace).toBe(environment.database.namespace);
    // Longer than a run may take, so a running backup does not fire it.
    expect(Number.parseInt(rule.for, 10) * 60).toBeGreaterThan(cron.spec.jobTemplate.spec.activeDeadlineSeconds);
    const errors: string[] = [];
    parser.parse(rule.expr).iterate({ enter: (node) => void (node.type.isError && errors.push(node.name)) });
    expect(errors).toEqual([]);
    // The routing matches only the platform's alert names; critical goes to on-call.
    const routing = findObject(monitoring, 'AlertmanagerConfig', 'platform-alert-routing').spec.route;
    const names = routing.matchers.find((m: any) => m.name === 'alertname');
    expect(new RegExp(`^(?:${names.value})$`).test('DatabaseBackupFailed')).toBe(true);
    const route = routing.routes.find((r: any) => r.matchers.some((m: any) => m.name === 'severity' && m.value === rule.labels.severity));
    expect(route.receiver).toBe('on-call');
  });
});

describe('the runbook\'s data recovery (7.2)', () => {
  it('is one verb that pauses automated sync before stopping the application, restores, and resumes after', () => {
    const runbook = fs.readFileSync(path.join(ROOT, 'docs', 'runbook.md'), 'utf8');
    // One line of prose, as it reads.
    const section = runbook.slice(runbook.indexOf('**Data recovery** (7.2)'), runbook.indexOf('**Database unreachable**')).replace(/\s+/g, ' ');
    const at = (text: string) => {
      const index = section.indexOf(text);
      expect(index, text).toBeGreaterThanOrEqual(0);
      return index;
    };
    // The order test/e2e/ops-scenario.mjs proves on the e2e cluster, as the runbook tells it.
    at('npm run ops -- emergency restore --env <env> --app webapp');
    const pause = at('pauses automated sync');
    const scaleDown = at('to 0');
    const restore = at('restores the database with replacement');
    const resume = at('resumes automated sync');
    expect(pause).toBeLessThan(scaleDown);
    expect(scaleDown).toBeLessThan(restore);
    expect(restore).toBeLessThan(resume);
  });
});
