import * as fs from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { compareText } from '../src/base/text-order';
import type { Toolchain } from '../toolchain';
import type { KubeClient } from './kube-client';
import { freePort } from './loopback';
import type { Supervisor } from './processes';

/**
 * prometheus-operator's real operator (v0.93.1, the release kube-prometheus-stack 88.5.3 runs,
 * built by toolchain/build.sh with its client generated as upstream generates it) on loopback
 * against the e2e API server: it turns the platform's PrometheusRules into the Prometheus' rule
 * files (ConfigMaps `prometheus-<name>-rulefiles-<n>`) and merges the platform's
 * AlertmanagerConfig into the Alertmanager's configuration (Secret
 * `alertmanager-<name>-generated`), by its own rules, and runs both as StatefulSets, which kwok
 * runs. The Prometheus and the Alertmanager are the ones the stand-in chart renders from the
 * platform's values (e2e/stand-in-monitoring-stack.ts).
 *
 * Started with the arguments kube-prometheus-stack's operator Deployment gets from the chart's
 * defaults (the platform sets no `prometheusOperator` value) that bear on what it generates:
 * `--localhost=127.0.0.1`, the Secrets it does not watch (`--secret-field-selector`) and the
 * config reloader's resources (`0` each: the chart sets none, where the operator's defaults
 * would). Left out: the config reloader's image (the chart's is the release's, the operator's
 * default), the kubelet Service it would keep (`--kubelet-service`, which nothing of the
 * platform reads), and TLS on its own web server, which listens on a free loopback port
 * instead of 10250. It reads the run's kubeconfig (`KUBECONFIG`) instead of its pod's account.
 */

/** kube-prometheus-stack's default `prometheusOperator.secretFieldSelector` (88.5.3 values.yaml). */
const SECRET_FIELD_SELECTOR = 'type!=kubernetes.io/dockercfg,type!=kubernetes.io/service-account-token,type!=helm.sh/release.v1';

export interface PrometheusOperatorOptions {
  readonly toolchain: Toolchain;
  readonly supervisor: Supervisor;
  /** The run folder. */
  readonly dir: string;
  readonly kubeconfig: string;
  readonly log: (line: string) => void;
}

/** The operator's arguments on loopback. */
export function prometheusOperatorArgs(port: number): string[] {
  return ['--localhost=127.0.0.1', `--secret-field-selector=${SECRET_FIELD_SELECTOR}`, '--config-reloader-cpu-request=0', '--config-reloader-cpu-limit=0', '--config-reloader-memory-request=0', '--config-reloader-memory-limit=0', `--web.listen-address=127.0.0.1:${port}`];
}

/** Start the operator once its release is installed (its CRDs are then served). */
export async function startPrometheusOperator(options: PrometheusOperatorOptions): Promise<void> {
  const { toolchain, supervisor, dir, kubeconfig, log } = options;
  const work = path.join(dir, 'prometheus-operator');
  fs.mkdirSync(work, { recursive: true });
  supervisor.start({ name: 'prometheus-operator', command: toolchain.bin('prometheus-operator', 'prometheus-operator'), args: prometheusOperatorArgs(await freePort()), env: { KUBECONFIG: kubeconfig }, cwd: work });
  log(`prometheus-operator ${toolchain.versions['prometheus-operator']} started`);
}

/** What the operator generated: each Prometheus' rule files by file name, each Alertmanager's configuration. */
export interface GeneratedMonitoring {
  /** `<namespace>/<prometheus>` to its rule files (`<rule namespace>-<rule name>-<uid>.yaml` to the file). */
  readonly ruleFiles: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** `<namespace>/<alertmanager>` to the configuration the operator generated (YAML). */
  readonly alertmanagerConfigs: Readonly<Record<string, string>>;
  /**
   * The configuration objects it rejected, `<Kind> <namespace>/<name>: <why>`, from the Warning
   * events it writes on them (`InvalidConfiguration`, pkg/operator), sorted.
   */
  readonly rejected: readonly string[];
}

/** The kinds whose objects the operator selects and may reject. */
const CONFIGURATION_KINDS = new Set(['AlertmanagerConfig', 'PrometheusRule', 'ServiceMonitor', 'PodMonitor', 'Probe', 'ScrapeConfig']);

/**
 * Read what the operator generated, from the objects it writes (v0.93.1 pkg/prometheus/server
 * `rulefiles` ConfigMaps labelled `prometheus-name`; pkg/alertmanager `alertmanager.yaml.gz` of
 * the `-generated` Secret), and what it rejected (pkg/alertmanager/operator.go: "AlertmanagerConfig
 * %s was rejected due to invalid configuration"). `expected`: how many Prometheus and
 * Alertmanager objects a converged run synced (`KubeClient.listSynced`).
 */
export async function generatedMonitoring(client: KubeClient, expected: { readonly prometheus: number; readonly alertmanager: number } = { prometheus: 0, alertmanager: 0 }): Promise<GeneratedMonitoring> {
  const ruleFiles: Record<string, Record<string, string>> = {};
  for (const prometheus of await client.listSynced('monitoring.coreos.com/v1', 'Prometheus', expected.prometheus)) {
    const { name, namespace } = prometheus.metadata;
    const files: Record<string, string> = {};
    const maps = (await client.list('v1', 'ConfigMap', namespace)).filter((map) => map.metadata.labels?.['prometheus-name'] === name && /-rulefiles-\d+$/.test(map.metadata.name));
    for (const map of maps.sort((a, b) => compareText(a.metadata.name, b.metadata.name))) Object.assign(files, map.data ?? {});
    ruleFiles[`${namespace}/${name}`] = Object.fromEntries(Object.entries(files).sort(([a], [b]) => compareText(a, b)));
  }
  const alertmanagerConfigs: Record<string, string> = {};
  for (const alertmanager of await client.listSynced('monitoring.coreos.com/v1', 'Alertmanager', expected.alertmanager)) {
    const { name, namespace } = alertmanager.metadata;
    const secret = await client.get('v1', 'Secret', `alertmanager-${name}-generated`, namespace);
    const gzipped = (secret as { data?: Record<string, string> } | undefined)?.data?.['alertmanager.yaml.gz'];
    if (gzipped !== undefined) alertmanagerConfigs[`${namespace}/${name}`] = gunzipSync(Buffer.from(gzipped, 'base64')).toString('utf8');
  }
  const rejected = (await client.list('v1', 'Event'))
    .filter((event) => event.reason === 'InvalidConfiguration' && CONFIGURATION_KINDS.has(event.involvedObject?.kind))
    .map((event) => `${event.involvedObject.kind} ${event.involvedObject.namespace}/${event.involvedObject.name}: ${event.message}`);
  return { ruleFiles, alertmanagerConfigs, rejected: [...new Set(rejected)].sort(compareText) };
}
