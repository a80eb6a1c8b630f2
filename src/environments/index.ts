import { local } from './local';
import { production } from './production';
import type { Environment } from './schema';
import { staging } from './staging';
import { testing } from './testing';
import { validateEnvironments } from './validate';

export type { Environment, EnvironmentInput, Strategy, Resources } from './schema';

/** 1.2: the promotion order. Promotion moves a version one step to the right. */
export const ENVIRONMENT_ORDER = ['local', 'testing', 'staging', 'production'] as const;
export type EnvironmentName = (typeof ENVIRONMENT_ORDER)[number];

/** The environment files, by name: data only (what differs, not how to render). */
export const ENVIRONMENT_FILES: Readonly<Record<EnvironmentName, unknown>> = { local, testing, staging, production };

/** The validated environments in promotion order; throws ConfigError listing every problem. */
export function loadEnvironments(
  order: readonly string[] = ENVIRONMENT_ORDER,
  files: Readonly<Record<string, unknown>> = ENVIRONMENT_FILES,
): Environment[] {
  return validateEnvironments(order, files);
}
