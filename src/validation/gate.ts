import * as path from 'node:path';
import type { Environment } from '../environments';
import { ConfigError } from '../base/errors';
import { type LocatedObject, type ManifestObject, objectLabel, readRenderedTree } from './manifests';
import { EXEMPTION_RULE, type PolicyContext, type PolicyRule, readExemptions, RULES } from './policy';
import { defaultRegistry, type SchemaRegistry } from './schemas';
import { crdKindsByFile, environmentCrdFiles, uninstalledCrdObjects } from './release-crds';
import { SCHEMA_DIR } from './schema-catalog';
import { projectRoot } from '../base/project-root';

/** Schema problems are reported under this rule; no annotation exempts them. */
export const SCHEMA_RULE = 'schema';

/** One line of the report: what to change, where. */
export interface Finding {
  readonly environment: string;
  /** File inside the environment's folder (`application.yaml`). */
  readonly file: string;
  /** `Kind/name` of the object to change, or `(file)` for a file that does not parse. */
  readonly object: string;
  readonly rule: string;
  readonly message: string;
}

/** An exemption annotation in force, and whether it suppressed anything. */
export interface Exemption {
  readonly environment: string;
  readonly file: string;
  readonly object: string;
  readonly rule: string;
  readonly reason: string;
  readonly used: boolean;
}

export interface GateResult {
  readonly environments: readonly string[];
  readonly files: number;
  readonly objects: number;
  readonly findings: readonly Finding[];
  readonly exemptions: readonly Exemption[];
}

/** The policy context of an environment: each application's name, registry and project. */
export function policyContextOf(environment: Environment): PolicyContext {
  return { applications: environment.applications.map((app) => ({ registry: app.image.registry, project: app.image.project, name: app.name })) };
}

function finding(subject: LocatedObject, rule: string, message: string): Finding {
  return { environment: subject.environment, file: subject.file, object: objectLabel(subject.object), rule, message };
}

/**
 * Schema-check every object and apply every rule per environment; exemption annotations
 * suppress the findings of their rule on their object. Findings come in file order, then
 * object order, then rule order.
 */
export function checkObjects(
  objects: readonly LocatedObject[],
  contextOf: (environment: string) => PolicyContext | undefined,
  rules: readonly PolicyRule[] = RULES,
  registry: SchemaRegistry = defaultRegistry(),
): { findings: Finding[]; exemptions: Exemption[] } {
  const position = new Map<LocatedObject, number>(objects.map((located, index) => [located, index]));
  const rated: { finding: Finding; at: number; rule: number }[] = [];
  const add = (subject: LocatedObject, rule: string, ruleIndex: number, message: string) =>
    rated.push({ finding: finding(subject, rule, message), at: position.get(subject) ?? -1, rule: ruleIndex });

  for (const located of objects) {
    for (const problem of registry.validate(located.object)) add(located, SCHEMA_RULE, -2, problem);
  }

  const { exemptions: declared, problems } = readExemptions(objects);
  for (const problem of problems) add(problem.subject, EXEMPTION_RULE, -1, problem.message);
  const used = new Set<(typeof declared)[number]>();

  const environments = [...new Set(objects.map((located) => located.environment))];
  for (const environment of environments) {
    const scope = objects.filter((located) => located.environment === environment);
    rules.forEach((rule, ruleIndex) => {
      for (const violation of rule.check(scope, contextOf(environment))) {
        const exemption = declared.find((entry) => entry.subject === violation.subject && entry.rule === rule.name);
        if (exemption !== undefined) used.add(exemption);
        else add(violation.subject, rule.name, ruleIndex, violation.message);
      }
    });
  }

  rated.sort((a, b) => a.at - b.at || a.rule - b.rule);
  return {
    findings: rated.map((entry) => entry.finding),
    exemptions: declared.map((entry) => ({
      environment: entry.subject.environment,
      file: entry.subject.file,
      object: objectLabel(entry.subject.object),
      rule: entry.rule,
      reason: entry.reason,
      used: used.has(entry),
    })),
  };
}

export interface GateOptions {
  /** Folder with one sub-folder of rendered manifests per environment (`dist`). */
  readonly dir: string;
  /** The validated environments; each folder of `dir` must be one of them. */
  readonly environments: readonly Environment[];
  /**
   * The schema folder whose `crds/` the release versions' CRD files are read from.
   * @default the project's (`<project root>/schemas`)
   */
  readonly schemaDir?: string;
}

/** Run the gate over a rendered tree. Throws ConfigError for a folder without an environment. */
export function runGate(options: GateOptions): GateResult {
  const tree = readRenderedTree(options.dir);
  const contexts = new Map(options.environments.map((environment) => [environment.name, policyContextOf(environment)]));
  const strangers = tree.environments.filter((name) => !contexts.has(name));
  if (strangers.length > 0) {
    throw new ConfigError(
      strangers.map((name) => `${path.join(options.dir, name)}: no environment "${name}" in src/environments (remove the folder or render it with npm run synth)`),
    );
  }
  const { findings, exemptions } = checkObjects(tree.objects, (environment) => contexts.get(environment));
  // The CRDs follow the release versions each environment runs (./release-crds.ts).
  const kinds = crdKindsByFile(options.schemaDir ?? path.join(projectRoot(), SCHEMA_DIR));
  for (const environment of options.environments.filter((candidate) => tree.environments.includes(candidate.name))) {
    const versions = Object.entries(environment.infrastructure.versions).map(([release, version]) => `${release} ${version}`).join(', ');
    const scope = tree.objects.filter((located) => located.environment === environment.name);
    for (const { subject, message } of uninstalledCrdObjects(scope, kinds, environmentCrdFiles(environment), versions)) {
      findings.push({ environment: subject.environment, file: subject.file, object: objectLabel(subject.object), rule: SCHEMA_RULE, message });
    }
  }
  const unreadable: Finding[] = tree.unreadable.map((entry) => ({
    environment: entry.environment,
    file: entry.file,
    object: '(file)',
    rule: SCHEMA_RULE,
    message: `not valid YAML: ${entry.problem}`,
  }));
  return { environments: tree.environments, files: tree.files, objects: tree.objects.length, findings: [...unreadable, ...findings], exemptions };
}

/**
 * Schema problems and the findings of the rules that judge an object alone, as
 * `<rule>: <message>` lines; empty when the object passes. For tests of constructs: the
 * rules that relate objects (selectors, backends, network policies, pull secrets through
 * a ServiceAccount) need the whole environment, which `runGate` sees.
 */
export function validateObject(object: ManifestObject, context?: PolicyContext): string[] {
  const located: LocatedObject = { environment: '-', file: '-', object };
  const rules = RULES.filter((rule) => rule.scope === 'object');
  return checkObjects([located], () => context, rules).findings.map((entry) => `${entry.rule}: ${entry.message}`);
}
