import type * as z from 'zod';

/**
 * What a delivery strategy (1.4) decides about the values files: its `strategy:` section,
 * how the application's `replicas` and `image.tag` go with it, the tag it runs, the edits
 * that release a version and take its steps, and the names it derives. Each strategy has one
 * module, `src/environments/strategy-<strategy>.ts`, listed in ./strategy-registry.ts. Those modules
 * and this one belong to the configuration layer (zod, the contract and the values files
 * only), so that the schema of the values files (src/environments/schema.ts) is built from them.
 */

/** The `strategy:` section of `<application>.yaml`: a strict object whose `type` names the strategy. */
export type StrategySchema = z.ZodObject<{ type: z.ZodLiteral<string> }, z.core.$strict>;

/** The fields of `<application>.yaml` that go with the strategy: the pods of its Deployment and the image tag it runs. */
export interface WorkloadValues {
  readonly strategy: { readonly type: string };
  readonly replicas?: number | undefined;
  readonly image: { readonly tag?: string | undefined };
}

/** One rule the values break, at its field of `<application>.yaml`. */
export interface ValuesIssue {
  /** The field's path in the file, e.g. `['image', 'tag']`. */
  readonly path: readonly string[];
  /** What the file holds there (undefined when the field is missing). */
  readonly input: unknown;
  /** The rule, worded to follow the field: "must ...", "is required ...". */
  readonly message: string;
}

/** The values typed as the strategy has its fields, or the rules they break. */
export type WorkloadCheck<T> = { readonly values: T; readonly issues?: undefined } | { readonly values?: undefined; readonly issues: readonly ValuesIssue[] };

/** How a strategy has the application's `replicas` and `image.tag`. */
export interface WorkloadFields<F> {
  /** The values with the fields typed as this strategy has them (the same object), or the rules they break. */
  check<V extends WorkloadValues>(values: V): WorkloadCheck<V & F>;
  /**
   * How the fields' descriptions (the JSON Schema's, which editors show) speak of this
   * strategy: the fields are required with it, or left out, and why.
   */
  readonly described: 'required' | { readonly replicas: string; readonly tag: string };
}

/** How an edit's summary and hints name the application: `<environment>[/<application>]`, and the options that select it. */
export interface EditTarget {
  /** `<environment>`, or `<environment>/<application>` when the environment has several. */
  readonly label: string;
  /** `--env <environment>`, with `--app <application>` when the environment has several. */
  readonly options: string;
}

/** One field of `<application>.yaml` to set or remove, and what that means, for people. */
export interface FieldEdit {
  /** Field path inside the file, e.g. `['image', 'tag']`. */
  readonly path: readonly string[];
  /** The new value, or undefined to remove the field. */
  readonly value: string | undefined;
  /** True when the file already says it: nothing to write. */
  readonly unchanged: boolean;
  /** One line: what runs where after the change. */
  readonly summary: string;
}

/** A name derived from an application's name, and what it becomes (an object name, a label value). */
export interface DerivedName {
  readonly name: string;
  readonly use: string;
}

/** An application as its strategy's rules see it: its `strategy:` section and the fields the strategy typed. */
export type StrategyApplication<S, F> = { readonly strategy: S } & F;

/** The edits only some strategies have, each a command of its own (`npm run <step>`). */
export interface StrategySteps<A> {
  /** `npm run switch`: move the traffic to the other version, which runs already. */
  switch?(application: A, target: EditTarget): FieldEdit;
  /** `npm run retire`: remove the version that no longer takes traffic. */
  retire?(application: A, target: EditTarget): FieldEdit;
  /**
   * `npm run rollback` without `--tag`: an edit back this strategy makes before releasing the
   * previous tag of the file's history, or undefined to release that tag.
   */
  rollback?(application: A, target: EditTarget): FieldEdit | undefined;
}

/** The commands of StrategySteps. */
export type StepName = keyof StrategySteps<unknown>;

/** Everything a delivery strategy decides about the values files. */
export interface StrategyValues<Schema extends StrategySchema, F> {
  /** Its `strategy.type` in the values files. */
  readonly type: z.output<Schema>['type'];
  /** Its branch of the `strategy:` section, with its own fields and their rules. */
  readonly schema: Schema;
  /** How it has the application's `replicas` and `image.tag`. */
  readonly workload: WorkloadFields<F>;
  /** The tag that takes the traffic. */
  runningTag(application: StrategyApplication<z.output<Schema>, F>): string;
  /** The newest tag it renders: the schema version the database must have (1.3 step 5). */
  newestTag(application: StrategyApplication<z.output<Schema>, F>): string;
  /** The edit that makes the application run `tag` (`npm run release`, `promote`, `rollback`). */
  release(application: StrategyApplication<z.output<Schema>, F>, tag: string, target: EditTarget): FieldEdit;
  /** Its own steps, beside a release. */
  readonly steps: StrategySteps<StrategyApplication<z.output<Schema>, F>>;
  /**
   * The names it derives from the application's name, beside every strategy's
   * (src/contract/naming.ts `derivedNames`); each is held to the 63 characters of a label value.
   */
  derivedNames(application: string): readonly DerivedName[];
  /** The Deployments it runs in the cluster for the application named `name`, as the live operations find them. */
  liveWorkloads(name: string, application: StrategyApplication<z.output<Schema>, F>): readonly LiveWorkload[];
}

/** A Deployment a strategy runs in the cluster, as the live operations (`npm run ops`) read it. */
export interface LiveWorkload {
  /** The Deployment's name. */
  readonly deployment: string;
  /** What it is to the strategy: `rolling`, `blue`, `green`, `primary`, `canary`. */
  readonly role: string;
  /** Whether the application's Service sends it the traffic. */
  readonly serves: boolean;
  /**
   * The image tag its pods run by the values file.
   * @default - decided in the cluster (Flagger's primary runs the last tag it promoted)
   */
  readonly tag?: string;
}

/** Negative when `a` is older than `b` (both `v<major>.<minor>.<patch>`). */
export function compareTags(a: string, b: string): number {
  // Compared as whole numbers of any length (BigInt), never as floats: v9007199254740993.0.0 is newer than ...992.
  const [x, y] = [a, b].map((tag) => tag.slice(1).split('.').map(BigInt)) as [bigint[], bigint[]];
  for (let part = 0; part < 3; part++) if (x[part]! !== y[part]!) return x[part]! < y[part]! ? -1 : 1;
  return 0;
}

/** The fields of a strategy that runs one Deployment: its pods, and the tag it runs. */
export interface OneDeploymentFields {
  readonly replicas: number;
  readonly image: { readonly tag: string };
}

function hasOneDeployment<V extends WorkloadValues>(values: V): values is V & OneDeploymentFields {
  return values.replicas !== undefined && values.image.tag !== undefined;
}

/** `replicas` and `image.tag` required: the pods and the version of the strategy's one Deployment. */
export const ONE_DEPLOYMENT: WorkloadFields<OneDeploymentFields> = {
  check(values) {
    if (hasOneDeployment(values)) return { values };
    const type = values.strategy.type;
    const issues: ValuesIssue[] = [];
    if (values.replicas === undefined) {
      issues.push({ path: ['replicas'], input: undefined, message: `is required with the ${type} strategy and must be a whole number of at least 1` });
    }
    if (values.image.tag === undefined) {
      issues.push({ path: ['image', 'tag'], input: undefined, message: `is required with the ${type} strategy and must look like v<major>.<minor>.<patch>` });
    }
    return { issues };
  },
  described: 'required',
};

export interface OneDeploymentStrategyProps<Schema extends StrategySchema> {
  /** Its `strategy.type`: the literal `type` of its schema. */
  readonly type: z.output<Schema>['type'];
  /** Its branch of the `strategy:` section. */
  readonly schema: Schema;
  /**
   * The names it derives besides every strategy's.
   * @default - none
   */
  readonly derivedNames?: (application: string) => readonly DerivedName[];
  /**
   * The Deployments it runs in the cluster.
   * @default - the one Deployment named after the application, serving `image.tag`
   */
  readonly liveWorkloads?: (name: string, application: OneDeploymentFields) => readonly LiveWorkload[];
}

/**
 * A strategy that runs one Deployment named after the application, `replicas` pods at
 * `image.tag` (rolling, canary): a release sets `image.tag`, and there are no steps besides.
 */
export function oneDeploymentStrategy<Schema extends StrategySchema>(props: OneDeploymentStrategyProps<Schema>): StrategyValues<Schema, OneDeploymentFields> {
  const { type } = props;
  const runningTag = (application: OneDeploymentFields) => application.image.tag;
  return {
    type,
    schema: props.schema,
    workload: ONE_DEPLOYMENT,
    runningTag,
    newestTag: runningTag,
    release(application, tag, target) {
      const running = runningTag(application);
      return { path: ['image', 'tag'], value: tag, unchanged: running === tag, summary: `${target.label}: image.tag ${running} -> ${tag} (${type})` };
    },
    steps: {},
    derivedNames: props.derivedNames ?? (() => []),
    liveWorkloads: props.liveWorkloads ?? ((name, application) => [{ deployment: name, role: type, serves: true, tag: runningTag(application) }]),
  };
}
