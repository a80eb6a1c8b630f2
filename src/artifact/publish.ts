import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import { ensureToolchain, locateToolchain } from '../../toolchain';
import { RefusedError, UsageError } from '../base/errors';
import { redactCredentials } from '../base/printable';
import { type ApplicationChartFiles, writeChart } from './application-chart';
import { publishedChartsRepository } from '../contract/layout';
import { OCI_REGISTRY_PATTERN, OCI_REGISTRY_RULE } from '../environments/fields';

/** Helm (helm.sh/helm/v4), pinned and built from its module by toolchain/build.sh, as Argo CD ships it. */
export function helmBinary(projectRoot: string): string {
  try {
    return locateToolchain(projectRoot).bin('helm', 'helm');
  } catch {
    return ensureToolchain(['helm'], projectRoot).bin('helm', 'helm');
  }
}

/** An OCI registry location, `oci://<host>[/<path>]`, as helm push takes it. */
export interface Registry {
  readonly host: string;
  /** `oci://<host>[/<path>]` without a trailing slash. */
  readonly url: string;
}

export function parseRegistry(value: string, option = '--registry'): Registry {
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(value)) {
    throw new UsageError(`${option} must not hold credentials (${redactCredentials(value)}): give them in REGISTRY_USERNAME and REGISTRY_PASSWORD, which log in for this run only`);
  }
  // A host is case-insensitive (DNS): written in capitals it names the same registry.
  const parts = /^oci:\/\/([^/]*)(.*?)\/?$/.exec(value);
  const host = parts?.[1]?.toLowerCase() ?? '';
  const location = `oci://${host}${parts?.[2] ?? ''}`;
  if (parts === null || !OCI_REGISTRY_PATTERN.test(location)) throw new UsageError(`${option} "${value}" must be ${OCI_REGISTRY_RULE}`);
  return { host, url: location };
}

/**
 * Whether a registry host (`<host>[:<port>]`) is a loopback address: `localhost`, an address of
 * 127.0.0.0/8, or `[::1]`. Only there may plain HTTP carry the charts and the credentials.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/:\d+$/, '');
  return name === 'localhost' || name === '[::1]' || /^127(\.\d{1,3}){3}$/.test(name);
}

/** Where an application's chart of an environment is published: `<registry>/<environment>/<application>`. */
export function chartReference(registry: Registry, environment: string, application: string): string {
  return `${publishedChartsRepository(registry.url, environment)}/${application}`;
}

/** How publishing reaches the registry. */
export interface PublishSettings {
  readonly helm: string;
  readonly registry: Registry;
  /** Plain HTTP (a registry on loopback without TLS). */
  readonly plainHttp: boolean;
  /**
   * A CA bundle the registry's certificate is checked against (a registry with a private CA).
   * @default - the system's trusted CAs
   */
  readonly caFile?: string;
  /** Helm's registry credentials file to use (a login made for this run), else Helm's own with Docker's as fallback. */
  readonly registryConfig?: string;
}

/** What became of one chart. */
export interface Published {
  readonly application: string;
  readonly reference: string;
  readonly version: string;
  readonly result: 'pushed' | 'already published';
  readonly digest?: string;
}

function helm(settings: PublishSettings, args: readonly string[], input?: string): { ok: boolean; output: string } {
  const env = { ...process.env, ...(settings.registryConfig === undefined ? {} : { HELM_REGISTRY_CONFIG: settings.registryConfig }) };
  const remote = args[0] !== 'package';
  const flags = [...(settings.plainHttp && remote ? ['--plain-http'] : []), ...(settings.caFile !== undefined && remote ? ['--ca-file', settings.caFile] : [])];
  const result = spawnSync(settings.helm, [...args, ...flags], { encoding: 'utf8', env, input });
  if (result.error) throw new RefusedError(`cannot run helm (${settings.helm}): ${result.error.message}`);
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}`.trim() };
}

/**
 * Log in to the registry for this run only: the credentials go to a registry file in a
 * temporary folder (never Helm's or Docker's own), the password through standard input.
 */
export function loginForRun(settings: PublishSettings, username: string, password: string, dir: string): PublishSettings {
  const withConfig = { ...settings, registryConfig: path.join(dir, 'registry.json') };
  const login = helm(withConfig, ['registry', 'login', settings.registry.host, '--username', username, '--password-stdin'], password);
  if (!login.ok) throw new RefusedError(`helm registry login ${settings.registry.host} as ${username}: ${login.output}`);
  return withConfig;
}

/**
 * Whether a published chart's folder holds the chart's files: the same data in Chart.yaml
 * (helm package writes it again in its own layout), every other file byte for byte.
 */
function sameFiles(chart: ApplicationChartFiles, folder: string): boolean {
  const found = (fs.readdirSync(folder, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(folder, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
  const same = (file: string) => {
    const ours = chart.files.get(file);
    const theirs = fs.readFileSync(path.join(folder, file), 'utf8');
    return file === 'Chart.yaml' ? isDeepStrictEqual(parse(ours ?? ''), parse(theirs)) : ours === theirs;
  };
  return found.length === chart.files.size && found.every(same);
}

/**
 * Package an application's chart and push it to `<registry>/<environment>/<application>`
 * with Helm, once: a version already there with the same files is left as it is; one with
 * other files is refused (a version names one content, for good).
 */
export function publishChart(settings: PublishSettings, environment: string, chart: ApplicationChartFiles): Published {
  const reference = chartReference(settings.registry, environment, chart.name);
  const version = chart.version.version;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-gitops-publish-'));
  try {
    const pulled = helm(settings, ['pull', reference, '--version', version, '--untar', '--untardir', path.join(work, 'published')]);
    if (pulled.ok) {
      if (!sameFiles(chart, path.join(work, 'published', chart.name))) {
        throw new RefusedError(`${reference}:${version} is already published with other content: a version is never replaced (is dist/${environment} what synth renders? synth gives a changed chart the next version)`);
      }
      return { application: chart.name, reference, version, result: 'already published' };
    }
    if (!/not found|404|manifest unknown|name unknown/i.test(pulled.output)) throw new RefusedError(`helm pull ${reference} --version ${version}: ${pulled.output}`);
    const folder = writeChart(chart, path.join(work, 'chart'));
    const packaged = helm(settings, ['package', folder, '--destination', work]);
    if (!packaged.ok) throw new RefusedError(`helm package ${chart.name}: ${packaged.output}`);
    const repository = publishedChartsRepository(settings.registry.url, environment);
    const pushed = helm(settings, ['push', path.join(work, `${chart.name}-${version}.tgz`), repository]);
    if (!pushed.ok) throw new RefusedError(`helm push ${chart.name} ${version} to ${repository}: ${pushed.output}`);
    const digest = /Digest:\s*(sha256:[0-9a-f]{64})/.exec(pushed.output)?.[1];
    return { application: chart.name, reference, version, result: 'pushed', ...(digest === undefined ? {} : { digest }) };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
