/**
 * The configuration half of the strategies' registry lives with the values it validates,
 * src/environments/strategy-registry.ts (the schema of the values files is built from
 * it, so it sits in the configuration layer, below what renders). This module re-exports it for
 * the commands that still import it from here.
 */
export * from '../environments/strategy-registry';
