import { projectRoot } from '../tooling/cli';
import type { Environment } from './schema';
import { validateEnvironments } from './validate';
import { readValuesTexts, type ValuesTexts } from './values-file';

export type { Environment, Strategy, Resources, EnvironmentValuesInput, ApplicationValuesInput } from './schema';

/** 1.2: the promotion order. Promotion moves a version one step to the right. */
export const ENVIRONMENT_ORDER = ['local', 'testing', 'staging', 'production'] as const;
export type EnvironmentName = (typeof ENVIRONMENT_ORDER)[number];

/**
 * The validated environments in promotion order, from the values files below the project
 * root (or from `texts`, project-relative path -> text); throws ConfigError listing every
 * problem with its file and line.
 */
export function loadEnvironments(texts: ValuesTexts = readValuesTexts(projectRoot()), order: readonly string[] = ENVIRONMENT_ORDER): Environment[] {
  return validateEnvironments(order, texts);
}
