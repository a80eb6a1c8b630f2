import { type Environment, loadEnvironments } from '../environments';
import { readValuesTexts } from '../environments/values-file';
import { type CommandDefinition, type CommandOptions, type CommandValues } from '../tooling/cli';
import { applyEdit, type ValuesEdit } from '../release/release';
import { withProjectLock } from '../release/edit-lock';
import { describeResult } from '../release/report';

/**
 * A command that edits one values file (release, promote, switch, retire, rollback): load
 * the project's values, plan the edit, apply it and print the change with the rendered
 * diff. Nothing is written when any check fails.
 */
export function editCommand<O extends CommandOptions>(definition: {
  readonly name: string;
  readonly usage: string;
  readonly options: O;
  readonly plan: (values: CommandValues<O>, environments: readonly Environment[], root: string) => ValuesEdit;
}): CommandDefinition<O> {
  return {
    name: definition.name,
    usage: definition.usage,
    options: definition.options,
    afterError: 'Nothing was written.',
    run(values, _positionals, { root, out, err }) {
      // Planned and applied under the project's lock: from the values as they are when it is held.
      return withProjectLock(root, definition.name, (line) => err(`${definition.name}: ${line}\n`), (lock) => {
        const edit = definition.plan(values, loadEnvironments(readValuesTexts(root)), root);
        out(describeResult(applyEdit(root, edit, lock)));
        return 0;
      });
    },
  };
}

/** The exit codes every edit command documents. */
export const EDIT_EXIT_CODES = 'Exit code: 0 done (or nothing to do), 1 refused (a rule, invalid values), 2 bad arguments.';
