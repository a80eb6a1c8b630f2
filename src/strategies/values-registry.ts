import type * as z from 'zod';
import { blueGreen } from './blue-green/values';
import { canary } from './canary/values';
import { rolling } from './rolling/values';
import type { DerivedName, LiveWorkload, StepName, StrategySchema, StrategyValues, WorkloadCheck, WorkloadValues } from './strategy-values';

/**
 * The registry of the delivery strategies, its configuration half: every strategy's
 * values module (`src/strategies/<strategy>/values.ts`), in the order the values files'
 * schema offers them. The registry has two files because the layers allow no one file: the
 * schema of the values files (src/environments/schema.ts, configuration) is built from this
 * list, and the configuration layer may not import what renders; the rendering half,
 * ./registry.ts, lists the same strategies by type, and TypeScript checks the two agree.
 * A new strategy is its folder and one entry (with its import) in each file.
 */
export const STRATEGY_VALUES = [
  rolling,
  blueGreen,
  canary,
] as const;

type Registered = (typeof STRATEGY_VALUES)[number];

/** A `strategy.type` of the values files. */
export type StrategyType = Registered['type'];

/** Every `strategy.type`, in the registry's order. */
export const STRATEGY_TYPES: readonly StrategyType[] = STRATEGY_VALUES.map((strategy) => strategy.type);

type WorkloadOf<S> = S extends StrategyValues<infer Schema, infer F> ? { readonly strategy: z.output<Schema> } & F : never;
type FieldsOf<S> = S extends StrategyValues<StrategySchema, infer F> ? F : never;

/**
 * The fields that go with the strategy, one variant per strategy: its `strategy:` section
 * with the `replicas` and `image.tag` it has (required with rolling and canary, left out
 * with blue-green). An Application is this and what every application has.
 */
export type Workload = WorkloadOf<Registered>;

/** The `strategy:` sections of every strategy, first and rest: the options of one discriminated union. */
export const STRATEGY_SCHEMAS = [STRATEGY_VALUES[0].schema, ...STRATEGY_VALUES.slice(1).map((strategy) => strategy.schema)] as const;

/** A strategy's values module, as the code that serves every strategy calls it. */
type AnyStrategyValues = StrategyValues<Registered['schema'], FieldsOf<Registered>>;

const BY_TYPE: ReadonlyMap<string, AnyStrategyValues> = new Map(STRATEGY_VALUES.map((strategy) => [strategy.type, strategy]));

/** The values module of the application's strategy. */
export function strategyValuesOf(application: { readonly strategy: { readonly type: StrategyType } }): AnyStrategyValues {
  return BY_TYPE.get(application.strategy.type)!;
}

/**
 * The values with `replicas` and `image.tag` typed as their strategy has them, or the rules
 * they break (the edge: src/environments/schema.ts calls it once per application file).
 */
export function checkWorkload<V extends WorkloadValues & { readonly strategy: { readonly type: StrategyType } }>(values: V): WorkloadCheck<V & Workload> {
  // The strategy the type names is the one whose schema parsed `values.strategy`, so the
  // fields it typed go with that section: a pairing TypeScript cannot follow through the lookup.
  return strategyValuesOf(values).workload.check(values) as WorkloadCheck<V & Workload>;
}

/** The tag an application serves: what its strategy runs in front. */
export function runningTagOf(application: Workload): string {
  return strategyValuesOf(application).runningTag(application);
}

/** The Deployments an application's strategy runs in the cluster, the one that serves marked. */
export function liveWorkloadsOf(application: Workload & { readonly name: string }): readonly LiveWorkload[] {
  return strategyValuesOf(application).liveWorkloads(application.name, application);
}

/** The newest tag an application renders: the schema version its database must have. */
export function newestTagOf(application: Workload): string {
  return strategyValuesOf(application).newestTag(application);
}

/**
 * The running tag a values file's data names, read through its strategy; undefined when its
 * `strategy:` section or the fields that go with it do not hold (an older file in git's history).
 */
export function runningTagIn(data: unknown): string | undefined {
  return tagsIn(data)?.running;
}

/**
 * The tags a values file's data renders (`running`: the one that serves; `deployed`: every
 * unit's, a blue-green inactive unit's too), read through its strategy; undefined when its
 * `strategy:` section or the fields that go with it do not hold.
 */
export function tagsIn(data: unknown): { readonly running: string; readonly deployed: readonly string[] } | undefined {
  const values = isRecord(data) ? data : {};
  const section = values['strategy'];
  const strategy = isRecord(section) && typeof section['type'] === 'string' ? BY_TYPE.get(section['type']) : undefined;
  const parsed = strategy?.schema.safeParse(section);
  if (strategy === undefined || !parsed?.success) return undefined;
  const image = isRecord(values['image']) ? values['image'] : {};
  const replicas = typeof values['replicas'] === 'number' ? values['replicas'] : undefined;
  const tag = typeof image['tag'] === 'string' ? image['tag'] : undefined;
  const checked = strategy.workload.check({ strategy: parsed.data, replicas, image: { tag } });
  if (checked.values === undefined) return undefined;
  // The name only names the Deployments, which are not asked for here.
  return { running: strategy.runningTag(checked.values), deployed: strategy.liveWorkloads('', checked.values).flatMap((workload) => (workload.tag === undefined ? [] : [workload.tag])) };
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The strategies that have the step `npm run <step>`, as a refusal names them. */
export function strategiesWithStep(step: StepName): StrategyType[] {
  return STRATEGY_VALUES.filter((strategy) => strategy.steps[step] !== undefined).map((strategy) => strategy.type);
}

/** The names every strategy derives from an application's name: held to a label value's length whatever the strategy. */
export function strategyDerivedNames(application: string): DerivedName[] {
  return STRATEGY_VALUES.flatMap((strategy) => strategy.derivedNames(application));
}

/** `a`, `a and b`, `a, b and c`. */
function list(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * The description of `replicas` or `image.tag` in the JSON Schema: `lead`, then with which
 * strategies the field is required and with which it is left out, and why.
 */
export function workloadFieldDescription(field: 'replicas' | 'tag', lead: string): string {
  const required = STRATEGY_VALUES.filter((strategy) => strategy.workload.described === 'required').map((strategy) => strategy.type);
  const leftOut = STRATEGY_VALUES.flatMap(({ workload: { described } }) => (described === 'required' ? [] : [described[field]]));
  return `${lead}: required with the ${list(required)} strategies; ${leftOut.join('; ')}.`;
}
