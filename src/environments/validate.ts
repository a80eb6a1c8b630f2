import type { z } from 'zod';
import { ConfigError } from '../errors';
import { environmentSchema, type Environment } from './schema';

/** `a.b[0].c`, the way a person finds the field in the file. */
function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`))
    .join('');
}

function formatValue(input: unknown): string {
  if (input === undefined || (typeof input === 'object' && input !== null)) return '';
  return ` ${JSON.stringify(input)}`;
}

/** The value at `path` in what the person wrote (zod does not always report it). */
function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let value: unknown = data;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** One line per zod issue: `<environment>: <path> <value> <rule>`. */
export function formatIssue(environment: string, issue: z.core.$ZodIssue, data: unknown): string {
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length > 0 ? `${formatPath(issue.path)}: ` : '';
    return `${environment}: ${where}unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys
      .map((key) => JSON.stringify(key))
      .join(', ')} (the schema does not name ${issue.keys.length > 1 ? 'them' : 'it'}; check the spelling)`;
  }
  const path = issue.path.length > 0 ? formatPath(issue.path) : '(environment)';
  const input = issue.input !== undefined && typeof issue.input !== 'object' ? issue.input : valueAt(data, issue.path);
  return `${environment}: ${path}${formatValue(input)} ${issue.message}`;
}

/**
 * Validate every environment of the platform, and the rules that span environments:
 * the promotion order names each environment exactly once, each file's `name` matches
 * its place, hosts are unique, and no live environment comes after a planned one.
 * Throws one ConfigError listing every problem.
 */
export function validateEnvironments(
  order: readonly string[],
  inputs: Readonly<Record<string, unknown>>,
): Environment[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const name of order) {
    if (seen.has(name)) problems.push(`order: "${name}" appears more than once in the environment order`);
    seen.add(name);
    if (!(name in inputs)) problems.push(`order: "${name}" has no environment file in src/environments`);
  }
  for (const name of Object.keys(inputs)) {
    if (!seen.has(name)) problems.push(`order: environment "${name}" is missing from the environment order`);
  }

  const environments: Environment[] = [];
  for (const name of new Set(order)) {
    if (!(name in inputs)) continue;
    const result = environmentSchema.safeParse(inputs[name], { reportInput: true });
    if (!result.success) {
      problems.push(...result.error.issues.map((issue) => formatIssue(name, issue, inputs[name])));
      continue;
    }
    if (result.data.name !== name) {
      problems.push(`${name}: name ${JSON.stringify(result.data.name)} must equal the environment's key "${name}"`);
    }
    environments.push(result.data);
  }

  const hostOwners = new Map<string, string>();
  for (const env of environments) {
    const host = new URL(env.application.url).hostname;
    const owner = hostOwners.get(host);
    if (owner !== undefined) {
      problems.push(`${env.name}: application.url ${JSON.stringify(env.application.url)} must be unique: ${owner} already serves ${host}`);
    } else {
      hostOwners.set(host, env.name);
    }
  }

  const firstPlanned = environments.findIndex((env) => env.status === 'planned');
  if (firstPlanned >= 0) {
    for (const env of environments.slice(firstPlanned + 1)) {
      if (env.status === 'live') {
        problems.push(
          `order: live environment "${env.name}" must not come after planned environment "${environments[firstPlanned]!.name}" (promotion follows the order)`,
        );
      }
    }
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return environments;
}
