import { notifyDeployment } from '../../communication/outage';
import type { CommandContext, CommandDefinition, CommandOptions, CommandValues } from '../../tooling/cli';

/**
 * A verb whose runs are significant deployments (1.6) when `significant` says so: after it has
 * run (whatever its outcome; a refused command line tells nobody), its notice goes to the team
 * chat and the stakeholders' channel (src/communication/outage.ts), each target's result on
 * stderr. A target that is not configured or fails is reported; the verb's exit code stands.
 */
export function withDeploymentNotice<O extends CommandOptions>(
  verb: CommandDefinition<O>,
  notice: (values: CommandValues<O>, exitCode: number, context: CommandContext) => { readonly environment: string; readonly message: string } | undefined,
): CommandDefinition<O> {
  return {
    ...verb,
    async run(values, positionals, context: CommandContext) {
      const code = await verb.run(values, positionals, context);
      const told = notice(values, code, context);
      if (told === undefined) return code;
      for (const result of await notifyDeployment(told.environment, told.message, context.env)) {
        context.err(`deployment notice to ${result.target}: ${result.ok ? 'told' : 'FAILED'}: ${result.detail}\n`);
      }
      return code;
    },
  };
}
