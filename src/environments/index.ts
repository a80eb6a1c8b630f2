import { projectRoot } from '../base/project-root';
import { UsageError } from '../base/errors';
import type { Application, BrokerUserConfig, Environment } from './schema';
import { validateEnvironments } from './validate';
import { readValuesTexts, type ValuesTexts } from './values-file';
import { ENVIRONMENT_ORDER } from '../contract/contract';

export type { Application, ApplicationOf, BrokerUserConfig, Environment, Strategy, Resources, EnvironmentValuesInput, ApplicationValuesInput } from './schema';

/** Every broker user of an environment (a KafkaUser each): each application's own, named after it, then the environment's others. */
export function brokerUsers(environment: Environment): BrokerUserConfig[] {
  return [...environment.applications.map((application) => application.broker), ...environment.broker.users];
}

/** 1.2: the promotion order (src/contract/contract.ts, the one list of the environments' names). */
export { ENVIRONMENT_ORDER } from '../contract/contract';

/**
 * The validated environments in promotion order, from the values files below the project
 * root (or from `texts`, project-relative path -> text); throws ConfigError listing every
 * problem with its file and line.
 */
export function loadEnvironments(texts: ValuesTexts = readValuesTexts(projectRoot()), order: readonly string[] = ENVIRONMENT_ORDER): Environment[] {
  return validateEnvironments(order, texts);
}

/**
 * The environment a command's `option` (`--env`, `--from`, `--to`) names, among `environments`
 * or validated from the values files below them when given a project root; otherwise a usage
 * error (exit 2) naming the environments there are.
 */
export function environmentNamed(environments: string | readonly Environment[], name: string, option = '--env'): Environment {
  const known = typeof environments === 'string' ? loadEnvironments(readValuesTexts(environments)) : environments;
  const environment = known.find((candidate) => candidate.name === name);
  if (environment === undefined) throw new UsageError(`${option} "${name}" is not an environment; choose one of ${ENVIRONMENT_ORDER.join(', ')}`);
  return environment;
}

/**
 * The application a command acts on in `environment`: the one `--app` names, or the only
 * one when the environment has one. Otherwise a usage error (exit 2) naming the
 * environment and its applications.
 */
export function selectApplication(environment: Environment, name: string | undefined, option = '--app'): Application {
  const known = environment.applications.map((app) => app.name).join(', ');
  if (name === undefined) {
    if (environment.applications.length === 1) return environment.applications[0]!;
    throw new UsageError(`${environment.name} has ${environment.applications.length} applications (${known}): name one with ${option} <application>`);
  }
  const application = environment.applications.find((app) => app.name === name);
  if (application === undefined) throw new UsageError(`${option} "${name}" is not an application of ${environment.name}; choose one of ${known}`);
  return application;
}
