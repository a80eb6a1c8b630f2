import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ALERTS } from '../../src/contract/contract';
import { locateToolchain } from '../../toolchain';
import { committedObjects, ENVIRONMENT_ORDER, ROOT, temporaryDirectory } from '../support';

// The rendered `deployment.rules` on Prometheus' own rule engine: `promtool check rules` and
// `promtool test rules` (Prometheus v3.14, built by toolchain/build.sh). Each case feeds series
// to the rules the environment renders and asserts, at the minute Prometheus evaluates, which
// alerts fire: the contract's `for` durations and error-rate threshold (2.4 / 8), as the
// engine that runs them applies them. Every value below is derived from the contract's ALERTS.

const promtool = locateToolchain(ROOT).bin('prometheus', 'promtool');
const work = temporaryDirectory('platform-gitops-promtool-');
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** Whole minutes of a Prometheus duration the contract writes in minutes (`10m`). */
function minutes(duration: string): number {
  const match = /^(\d+)m$/.exec(duration);
  if (!match) throw new Error(`expected a duration in whole minutes, got ${duration}`);
  return Number(match[1]);
}

interface Rule {
  readonly alert: string;
  readonly annotations?: Record<string, string>;
}

/**
 * An annotation as Prometheus renders it for one alert: the label references and the one
 * `$value | humanizePercentage` the rules use. What is left unrendered fails the comparison.
 */
function rendered(template: string, labels: Record<string, string>, percentage?: string): string {
  return template
    .replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, name: string) => labels[name] ?? '')
    .replace(/\{\{ \$value \| humanizePercentage \}\}/g, percentage ?? '');
}

function promtoolRun(args: readonly string[]): { status: number | null; output: string } {
  const result = spawnSync(promtool, [...args], { cwd: work, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const deploymentRules = ENVIRONMENT_ORDER.flatMap((environment) =>
  committedObjects(environment)
    .filter((object) => object.kind === 'PrometheusRule' && (object.spec?.groups ?? []).some((g: any) => g.name === ALERTS.groupName))
    .map((object) => ({ environment, object })),
);

describe('deployment.rules on promtool', () => {
  it('is rendered for every application of every environment', () => {
    for (const environment of ENVIRONMENT_ORDER) expect(deploymentRules.some((r) => r.environment === environment), environment).toBe(true);
  });

  describe.each(deploymentRules.map(({ environment, object }) => [`${environment} ${object.metadata.namespace}/${object.metadata.name}`, object] as const))('%s', (id, object) => {
    const namespace = String(object.metadata.namespace);
    const file = `${id.replace(/[^a-z0-9]+/gi, '-')}.rules.yaml`;
    fs.writeFileSync(path.join(work, file), stringify({ groups: object.spec.groups }));
    const rules: Rule[] = object.spec.groups.find((g: any) => g.name === ALERTS.groupName).rules;
    const rule = (name: string): Rule => {
      const found = rules.find((r) => r.alert === name);
      if (!found) throw new Error(`${id}: no alert ${name} in ${ALERTS.groupName}`);
      return found;
    };

    /** Runs `promtool test rules` on one test of this rule file; returns its output when it fails. */
    const test = (name: string, body: Record<string, unknown>): void => {
      const testFile = `${file}.${name}.test.yaml`;
      fs.writeFileSync(path.join(work, testFile), stringify({ rule_files: [file], evaluation_interval: '1m', tests: [{ interval: '1m', ...body }] }));
      const { status, output } = promtoolRun(['test', 'rules', testFile]);
      expect(output, output).toContain('SUCCESS');
      expect(status, output).toBe(0);
    };

    it('passes promtool check rules', () => {
      const { status, output } = promtoolRun(['check', 'rules', file]);
      expect(status, output).toBe(0);
      expect(output).toMatch(/SUCCESS: 2 rules found/);
    });

    it(`fires ${ALERTS.deploymentFailed.name} (${ALERTS.deploymentFailed.severity}) once Progressing has been False for ${ALERTS.deploymentFailed.for}, not a minute before`, () => {
      const { name, severity } = ALERTS.deploymentFailed;
      const hold = minutes(ALERTS.deploymentFailed.for);
      const series = { namespace, deployment: 'webapp', condition: 'Progressing', status: 'false' };
      const labels = { ...series, severity };
      const annotations = Object.fromEntries(Object.entries(rule(name).annotations ?? {}).map(([k, v]) => [k, rendered(v, labels)]));
      test('deployment-failed', {
        input_series: [
          { series: `kube_deployment_status_condition{${Object.entries(series).map(([k, v]) => `${k}="${v}"`).join(',')}}`, values: `1x${hold * 3}` },
          // The same Deployment's other conditions, which must not fire.
          { series: `kube_deployment_status_condition{namespace="${namespace}",deployment="webapp",condition="Available",status="false"}`, values: `1x${hold * 3}` },
        ],
        alert_rule_test: [
          { eval_time: `${hold - 1}m`, alertname: name, exp_alerts: [] },
          { eval_time: `${hold}m`, alertname: name, exp_alerts: [{ exp_labels: labels, exp_annotations: annotations }] },
        ],
      });
    });

    it(`fires ${ALERTS.highErrorRate.name} (${ALERTS.highErrorRate.severity}) above ${ALERTS.highErrorRate.ratio * 100}% 5xx over ${ALERTS.highErrorRate.rateWindow} held ${ALERTS.highErrorRate.for}, and never below it`, () => {
      const { name, severity, ratio } = ALERTS.highErrorRate;
      const hold = minutes(ALERTS.highErrorRate.for);
      const perMinute = 1000;
      const requests = (errors: number) => [
        { series: `http_requests_total{namespace="${namespace}",status="500"}`, values: `0+${errors}x${hold * 10}` },
        { series: `http_requests_total{namespace="${namespace}",status="200"}`, values: `0+${perMinute - errors}x${hold * 10}` },
      ];
      // Twice the threshold: a rate needs two samples, so the expression first holds at 1m.
      const above = Math.round(perMinute * ratio * 2);
      const labels = { namespace, severity };
      const annotations = Object.fromEntries(Object.entries(rule(name).annotations ?? {}).map(([k, v]) => [k, rendered(v, labels, `${(above / perMinute) * 100}%`)]));
      test('error-rate-above', {
        input_series: requests(above),
        alert_rule_test: [
          { eval_time: `${hold}m`, alertname: name, exp_alerts: [] },
          { eval_time: `${hold + 1}m`, alertname: name, exp_alerts: [{ exp_labels: labels, exp_annotations: annotations }] },
        ],
      });
      // Below the threshold (four fifths of it), for as long as the series lasts.
      test('error-rate-below', {
        input_series: requests(Math.round(perMinute * ratio * 0.8)),
        alert_rule_test: [{ eval_time: `${hold * 10}m`, alertname: name, exp_alerts: [] }],
      });
      // Another namespace's errors never count against this one.
      test('error-rate-elsewhere', {
        input_series: [
          { series: `http_requests_total{namespace="${namespace}-other",status="500"}`, values: `0+${perMinute}x${hold * 10}` },
          { series: `http_requests_total{namespace="${namespace}",status="200"}`, values: `0+${perMinute}x${hold * 10}` },
        ],
        alert_rule_test: [{ eval_time: `${hold * 10}m`, alertname: name, exp_alerts: [] }],
      });
    });
  });
});
