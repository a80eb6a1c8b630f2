import { stringify } from 'yaml';
import { UsageError } from '../../base/errors';
import { operationsRoleManifests } from '../../cluster/operations-role';
import { ENVIRONMENT_ORDER, environmentNamed } from '../../environments';
import { loadPlatform } from '../../environments/platform';
import type { CommandDefinition } from '../../tooling/cli';

const USAGE = `usage: npm run ops -- role --env <environment> [--group <group>]

Prints what the verbs need in a cluster, as YAML to apply (kubectl apply -f -): the
ClusterRole and the Role in Argo CD's namespace (src/cluster/operations-role.ts), and with
--group the bindings that grant them to that group, with the binding of the broker chart's
Role (the users' password Secrets) in the broker's namespace, which must exist. The bootstrap creates the same objects
(Pulumi: \`operatorsGroup\`). Reads nothing from a cluster.
  --env <name>           one of ${ENVIRONMENT_ORDER.join(', ')} (required)
  --group <group>        the group (of your identity provider, or a certificate's O=) to bind
Exit code: 0 printed, 2 bad arguments.`;

const OPTIONS = { env: { type: 'string' }, group: { type: 'string' } } as const;

/** `npm run ops -- role`: the RBAC of the live operations, for review or to apply. */
export const ROLE: CommandDefinition<typeof OPTIONS> = {
  name: 'ops role',
  usage: USAGE,
  options: OPTIONS,
  run(values, _positionals, context) {
    if (values.env === undefined) throw new UsageError('--env <environment> is required');
    const environment = environmentNamed(context.root, values.env);
    if (values.group !== undefined && values.group.trim() === '') throw new UsageError('--group must name a group');
    const manifests = operationsRoleManifests(loadPlatform().controller.namespace, values.group, environment.broker.namespace);
    context.out(manifests.map((manifest) => stringify(manifest)).join('---\n'));
    return 0;
  },
};
