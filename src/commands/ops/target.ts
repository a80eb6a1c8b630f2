import { UsageError } from '../../base/errors';
import { printable } from '../../base/printable';
import { ClusterConnection } from '../../cluster/connection';
import { type Application, type Environment, ENVIRONMENT_ORDER, environmentNamed, selectApplication } from '../../environments';
import { type Platform, loadPlatform } from '../../environments/platform';
import type { CommandContext } from '../../tooling/cli';

/** The options every verb of `npm run ops` has. */
export const TARGET_OPTIONS = {
  env: { type: 'string' },
  app: { type: 'string' },
  context: { type: 'string' },
  output: { type: 'string', default: 'text' },
} as const;

/** How the options every verb has are described in its usage. */
export const TARGET_USAGE = `  --env <name>           one of ${ENVIRONMENT_ORDER.join(', ')} (required)
  --app <name>           the application (default: every application of the environment,
                         or the only one for verbs that act on one)
  --context <name>       kubeconfig context of the environment's cluster (default: the current
                         one of $KUBECONFIG, else ~/.kube/config, as kubectl)
  --output text|json     json: the result as one JSON document on stdout, progress on stderr`;

/** What a verb acts on: the environment, its applications in scope, the cluster, and where it prints. */
export interface OpsTarget {
  readonly environment: Environment;
  readonly platform: Platform;
  /** The applications in scope: the one `--app` names, else every one of the environment. */
  readonly applications: readonly Application[];
  /** Argo CD's namespace, where the Applications live. */
  readonly controllerNamespace: string;
  /** The cluster, connected on first use (a verb that skips the cluster needs no kubeconfig). */
  readonly cluster: ClusterConnection;
  readonly json: boolean;
  /** A progress or result line: stdout for text, stderr when stdout holds the JSON document. */
  readonly say: (line: string) => void;
  /** The verb's result: printed as JSON with --output json (text has been said already). */
  readonly result: (document: unknown) => void;
}

/** Read the options every verb has; `one` asks for exactly one application (the only one, or `--app`). */
export function opsTarget(values: { env?: string; app?: string; context?: string; output?: string }, context: CommandContext, one = false): OpsTarget {
  if (values.env === undefined) throw new UsageError('--env <environment> is required');
  if (values.output !== 'text' && values.output !== 'json') throw new UsageError(`--output "${values.output}" must be text or json`);
  const environment = environmentNamed(context.root, values.env);
  const applications = one || values.app !== undefined ? [selectApplication(environment, values.app)] : environment.applications;
  const platform = loadPlatform();
  const json = values.output === 'json';
  let cluster: ClusterConnection | undefined;
  return {
    environment,
    platform,
    applications,
    controllerNamespace: platform.controller.namespace,
    get cluster() {
      cluster ??= new ClusterConnection({ ...(values.context === undefined ? {} : { context: values.context }), ...(context.env.KUBECONFIG === undefined ? {} : { kubeconfig: context.env.KUBECONFIG }) });
      return cluster;
    },
    json,
    say: (line) => (json ? context.err : context.out)(`${printable(line)}\n`),
    result: (document) => {
      if (json) context.out(`${JSON.stringify(document, null, 2)}\n`);
    },
  };
}

/** Who a sync or a pause is recorded as: `--by`, else the login name. */
export function actor(by: string | undefined, env: NodeJS.ProcessEnv): string {
  return by ?? env.USER ?? env.LOGNAME ?? 'unknown';
}


/** An option whose value is one of `choices`: the value, or a usage error naming them. */
export function oneOf<C extends string>(value: string | undefined, choices: readonly C[], option: string): C {
  if (value === undefined || !(choices as readonly string[]).includes(value)) throw new UsageError(`${option} must be one of ${choices.join(', ')}`);
  return value as C;
}
