import { RefusedError, UsageError } from '../../base/errors';
import { environmentNamed } from '../../environments';
import type { CommandDefinition } from '../../tooling/cli';

/** What one use of a verb changes on the cluster, in a few words; undefined when it only reads. */
type Classifier = (values: Readonly<Record<string, unknown>>, positionals: readonly string[]) => string | undefined;

/**
 * Which verbs of `npm run ops` change the environment's cluster, and which uses of them do
 * ('reads': none does). One row per verb of the ops command table (a verb without a row is
 * refused when the table is built): the production gate reads it, and a changing use of a verb
 * in an environment that does not sync automatically needs `--confirm <environment>`.
 */
export const VERB_CHANGES: Readonly<Record<string, Classifier | 'reads'>> = {
  status: 'reads',
  drift: 'reads',
  verify: 'reads',
  version: 'reads',
  check: 'reads',
  // The health step forwards a port to a pod: it reads.
  bluegreen: 'reads',
  // Tells people (chat, status page, stakeholders); the cluster is not touched.
  outage: 'reads',
  // Prints YAML; reads nothing from a cluster.
  role: 'reads',
  // Lists what each infrastructure release runs and what git wants.
  'upgrade-status': 'reads',
  sync: (values) => `starts an Argo CD sync of ${typeof values.application === 'string' ? `Application ${values.application}` : 'the application'}`,
  pause: () => 'turns automated sync off',
  resume: () => 'turns automated sync on again',
  rollback: (values) => `rolls back at the ${String(values.level)} level`,
  emergency: (values, [action]) => (action === 'crashloop' && values.fix !== true ? undefined : `runs the emergency procedure ${String(action)}${action === 'crashloop' ? ' --fix' : ''}`),
  canary: (values) => (values.promote === true ? 'opens the promotion gate' : values.rollback === true ? 'opens the rollback gate' : values.close === true ? "closes the canary's gates" : undefined),
  silence: (values) => (values.alert !== undefined ? "creates a silence in the environment's Alertmanager" : values.expire !== undefined ? "expires a silence in the environment's Alertmanager" : undefined),
};

/** What this use of `verb` changes, or undefined when it only reads (VERB_CHANGES). */
export function changeOf(verb: string, values: Readonly<Record<string, unknown>>, positionals: readonly string[]): string | undefined {
  const row = VERB_CHANGES[verb];
  if (row === undefined) throw new Error(`ops ${verb} is not classified in VERB_CHANGES: say whether it changes the cluster`);
  return row === 'reads' ? undefined : row(values, positionals);
}

const CONFIRM_USAGE = `  --confirm <env>        the environment's name: required for a change to an environment that does
                         not sync automatically (production), refused before the cluster is reached`;

/**
 * Refuse a change to an environment that does not sync automatically (contract 1.2: its
 * changes are made by hand, after review) unless `--confirm` names it; a `--confirm` that names
 * another environment is a bad argument. Reads only the values files: nothing reaches the cluster.
 */
function requireConfirmation(verb: string, values: Readonly<Record<string, unknown>>, positionals: readonly string[], root: string): void {
  const change = changeOf(verb, values, positionals);
  // Without --env the verb itself says it is required.
  if (change === undefined || typeof values.env !== 'string') return;
  const confirm = values.confirm;
  if (typeof confirm === 'string' && confirm !== values.env) throw new UsageError(`--confirm "${confirm}" must name the environment acted on, ${values.env}`);
  const environment = environmentNamed(root, values.env);
  if (environment.autoSync || confirm === environment.name) return;
  throw new RefusedError(`${environment.name} does not sync automatically: its changes are reviewed and made by hand (contract 1.2); ops ${verb} ${change}: give --confirm ${environment.name} to do it`);
}

/**
 * The ops verbs, each behind the production gate: a verb that can change the cluster takes
 * `--confirm <env>` and runs only once requireConfirmation let it, before its own work starts.
 */
export function behindProductionGate(subcommands: Readonly<Record<string, CommandDefinition<any>>>): Record<string, CommandDefinition<any>> {
  return Object.fromEntries(
    Object.entries(subcommands).map(([verb, definition]) => {
      if (VERB_CHANGES[verb] === undefined) throw new Error(`ops ${verb} is not classified in VERB_CHANGES: say whether it changes the cluster`);
      if (VERB_CHANGES[verb] === 'reads') return [verb, definition];
      const gated: CommandDefinition<any> = {
        ...definition,
        usage: definition.usage.replace(/\nExit code:/, `\n${CONFIRM_USAGE}\nExit code:`),
        options: { ...definition.options, confirm: { type: 'string' } },
        run(values, positionals, context) {
          requireConfirmation(verb, values, positionals, context.root);
          const { confirm: _confirm, ...own } = values as Record<string, unknown>;
          return definition.run(own, positionals, context);
        },
      };
      return [verb, gated];
    }),
  );
}
