import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { MANIFEST_EXTENSION, RENDERED_DIR } from '../contract/layout';
import { RefusedError } from '../base/errors';
import { VALIDATOR_CACHE_DIR } from '../validation/compiled-validators';
import { KUBERNETES_VERSIONS } from '../validation/schema-catalog';
import { type Kubeconform, kubeconformArguments, prepareKubeconform } from './kubeconform';
import { INFRASTRUCTURE_RELEASES } from '../infrastructure/releases';

/**
 * `npm run bench`'s gate part: the gate (`npm run validate`) against its floor (node
 * starting, reading and parsing the same YAML files: scripts/bench-gate-floor.cjs) and
 * against kubeconform on the same objects with the same schemas (converted into its layout,
 * run once per supported Kubernetes version as the gate checks both), each a process of its
 * own, run alternately so all see the same machine. Two sizes: the committed dist/ and N
 * copies of it, each copy's namespaces (and cluster-scoped names) suffixed, the shape of N
 * applications in the four environments.
 */

/** Options of the gate bench. */
export interface GateBenchOptions {
  /** The repository root. */
  readonly root: string;
  /** Alternating runs of each at the committed dist/'s size. */
  readonly runs: number;
  /** Copies of dist/ in the large set (100: about 26,000 objects). */
  readonly copies: number;
  /** Alternating runs of each at the large set's size. */
  readonly largeRuns: number;
  /** Scratch folder for the large set. */
  readonly workdir: string;
  /** Progress and the tables. */
  readonly log: (line: string) => void;
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface Timed {
  readonly milliseconds: number;
  readonly stdout: string;
}

/** Run a process to its end; exit codes in `accept` count as done (the gate's 1 is a finding). */
function timed(command: string, args: readonly string[], cwd: string, accept: readonly number[] = [0]): Timed {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 30 });
  const milliseconds = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.error !== undefined || !accept.includes(result.status ?? -1)) {
    throw new RefusedError(`${path.basename(command)} ${args.join(' ')} failed (exit ${result.status}):\n${result.error?.message ?? result.stderr}`);
  }
  return { milliseconds, stdout: result.stdout };
}

/**
 * dist/ copied `copies` times into `<target>/<environment>/<chart>.copy-<i>.yaml` (the rendered
 * layout: files directly in each environment's folder): every object's
 * namespace gets `-<i>`, as do the names of Namespaces and cluster-scoped objects, so no two
 * copies name the same object, and a Certificate's ClusterIssuer name. Edits the metadata lines
 * of cdk8s' output in place.
 */
export function writeCopies(dist: string, target: string, copies: number): number {
  let objects = 0;
  for (const environment of fs.readdirSync(dist).filter((name) => fs.statSync(path.join(dist, name)).isDirectory()).sort()) {
    for (const file of fs.readdirSync(path.join(dist, environment)).filter((name) => name.endsWith(MANIFEST_EXTENSION)).sort()) {
      const text = fs.readFileSync(path.join(dist, environment, file), 'utf8');
      const documents = parseAllDocuments(text).map((document) => ({
        text: text.slice(document.range[0], document.range[2]),
        object: document.toJS() as { kind?: string; metadata?: { name?: string; namespace?: string } } | null,
      }));
      for (let copy = 0; copy < copies; copy++) {
        const renamed = documents
          .filter((document) => document.object !== null)
          .map(({ text: source, object }) => {
            const metadata = /^metadata:\n(?: {2}.*\n)*/m.exec(source);
            if (metadata === null) return source;
            const clusterScoped = object!.metadata?.namespace === undefined;
            const block = metadata[0]
              .replace(/^( {2}namespace: )(.+)$/m, `$1$2-${copy}`)
              .replace(/^( {2}name: )(.+)$/m, (line, key: string, name: string) => (clusterScoped ? `${key}${name}-${copy}` : line));
            const renamedSource = source.slice(0, metadata.index) + block + source.slice(metadata.index + metadata[0].length);
            // A Certificate names its ClusterIssuer, renamed with the copy (the gate's certificate-issuer rule).
            return renamedSource.replace(/^ {2}issuerRef:\n(?: {4}.*\n)*/m, (ref) =>
              /^ {4}kind: ClusterIssuer$/m.test(ref) ? ref.replace(/^( {4}name: )(.+)$/m, `$1$2-${copy}`) : ref,
            );
          });
        objects += renamed.length;
        const dir = path.join(target, environment);
        fs.mkdirSync(dir, { recursive: true });
        const copyFile = `${file.slice(0, -MANIFEST_EXTENSION.length)}.copy-${String(copy).padStart(3, '0')}${MANIFEST_EXTENSION}`;
        fs.writeFileSync(path.join(dir, copyFile), renamed.map((document) => (document.endsWith('\n') ? document : `${document}\n`)).join('---\n'));
      }
    }
  }
  return objects;
}

interface Row {
  readonly objects: number;
  readonly floor: number;
  readonly gate: number;
  readonly kubeconform: number;
  readonly gateInvalid: number;
  readonly kubeconformInvalid: number;
}

/** The gate's summary: `N objects in M files checked, K findings, E exemptions`. */
const SUMMARY = /^(\d+) objects? in \d+ files? checked, (\d+) findings?/m;
/** kubeconform's `-summary`: `Summary: N resources found in M files - Valid: V, Invalid: I, Errors: E, Skipped: S`. */
const KUBECONFORM_SUMMARY = /Summary: (\d+) resources? found .* Invalid: (\d+), Errors: (\d+)/;

/** One set of objects measured `runs` times, alternating floor, gate and kubeconform. */
function measure(root: string, dir: string, runs: number, kubeconform: Kubeconform, log: (line: string) => void): Row {
  const floor: number[] = [];
  const gate: number[] = [];
  const checker: number[] = [];
  let objects = 0;
  let gateInvalid = 0;
  let kubeconformInvalid = 0;
  for (let run = 0; run < runs; run++) {
    log(`  run ${run + 1}/${runs}: floor, gate, kubeconform ${KUBERNETES_VERSIONS.join(' + ')}`);
    floor.push(timed(process.execPath, [path.join(root, 'scripts', 'bench-gate-floor.cjs'), dir], root).milliseconds);
    const validated = timed(process.execPath, [path.join(root, 'scripts', 'run.cjs'), 'validate', '--dir', dir], root, [0, 1]);
    gate.push(validated.milliseconds);
    const [, count, findings] = SUMMARY.exec(validated.stdout) ?? [];
    objects = Number(count);
    gateInvalid = Number(findings);
    let total = 0;
    kubeconformInvalid = 0;
    for (const minor of KUBERNETES_VERSIONS) {
      // Argo CD's kustomization folder is kustomize's input, not objects: the gate reads past it too.
      const checked = timed(kubeconform.binary, kubeconformArguments(kubeconform, minor, [dir], ['-summary', '-ignore-filename-pattern', `/${INFRASTRUCTURE_RELEASES.argoCd.name}/`]), root, [0, 1]);
      total += checked.milliseconds;
      const [, , invalid, errors] = KUBECONFORM_SUMMARY.exec(checked.stdout) ?? [];
      kubeconformInvalid += Number(invalid) + Number(errors);
    }
    checker.push(total);
  }
  return { objects, floor: median(floor), gate: median(gate), kubeconform: median(checker), gateInvalid, kubeconformInvalid };
}

const perSecond = (objects: number, milliseconds: number) => Math.round((objects / milliseconds) * 1000).toLocaleString('en-US');

/** Measure and print the table. */
export function benchGate(options: GateBenchOptions): void {
  const { root, log } = options;
  const kubeconform = prepareKubeconform(root, path.join(root, VALIDATOR_CACHE_DIR), log);
  const dist = path.join(root, RENDERED_DIR);
  log('gate: warming the compiled validators and the build (npm run validate once)');
  timed(process.execPath, [path.join(root, 'scripts', 'run.cjs'), 'validate'], root, [0, 1]);
  const large = path.join(options.workdir, `dist-x${options.copies}`);
  log(`gate: writing ${options.copies} copies of dist/ into ${large}`);
  const copied = writeCopies(dist, large, options.copies);
  log(`gate: ${copied} objects written`);

  const rows: Row[] = [];
  log(`gate: the committed dist/, ${options.runs} runs`);
  rows.push(measure(root, dist, options.runs, kubeconform, log));
  log(`gate: ${options.copies} copies of dist/, ${options.largeRuns} runs`);
  rows.push(measure(root, large, options.largeRuns, kubeconform, log));

  log('');
  log(`Gate vs floor vs kubeconform ${kubeconform.version} (median of alternating runs; ${os.cpus().length} cores, node ${process.version})`);
  log('| objects | floor: node reading and parsing the YAML | gate: npm run validate | gate / floor | kubeconform -strict, 1.35 + 1.36 | gate objects/s | kubeconform objects/s | gate findings / kubeconform invalid (both runs) |');
  log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    log(
      `| ${row.objects.toLocaleString('en-US')} | ${row.floor.toFixed(0)} ms | ${row.gate.toFixed(0)} ms | ${(row.gate / row.floor).toFixed(2)}x | ${row.kubeconform.toFixed(0)} ms | ${perSecond(row.objects, row.gate)} | ${perSecond(row.objects, row.kubeconform)} | ${row.gateInvalid} / ${row.kubeconformInvalid} |`,
    );
  }
  log('Target: gate <= 4x floor. Both check every object against Kubernetes 1.35 and 1.36 (built-ins) or its CRD; the gate adds its policy rules.');
}
