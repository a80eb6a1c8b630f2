import { Document, stringify } from 'yaml';
import { UsageError } from '../../base/errors';
import { operationsObjects, READ_ROLE, OPERATE_ROLE, FORBIDDEN_EXEC_NAMESPACES } from '../../cluster/operations-role';
import { ENVIRONMENT_ORDER, environmentNamed } from '../../environments';
import { loadPlatform } from '../../environments/platform';
import { operationsScope } from '../../synth/operations-scope';
import type { CommandDefinition } from '../../tooling/cli';

const USAGE = `usage: npm run ops -- role --env <environment> [--group <group>] [--readers-group <group>]

Prints what the verbs need in a cluster, as YAML to apply (kubectl apply -f -), each rule
with the verbs that need it (src/cluster/operations-role.ts): the readers' role (${READ_ROLE}:
status, drift --no-refresh, verify, check --component infrastructure, canary and silence list
with their --*-url) and the operators' (${OPERATE_ROLE}: the changing verbs, version, bluegreen,
check of the database and the broker), ClusterRoles for what spans the cluster and Roles in
the namespaces the verbs act in; Argo CD's Applications patched only by name (the environment's,
as rendered). No exec or port-forward in ${FORBIDDEN_EXEC_NAMESPACES.join(', ')}.
With --group the bindings that grant both roles to that group, and the broker chart's Role
(the users' password Secrets) in the broker's namespace; with --readers-group the bindings of
the readers' role alone. A Role in a namespace Argo CD creates needs that namespace. The
bootstrap creates the same objects (Pulumi: \`operatorsGroup\`, \`readersGroup\`). Reads nothing
from a cluster.
  --env <name>             one of ${ENVIRONMENT_ORDER.join(', ')} (required)
  --group <group>          the operators' group (of your identity provider, or a certificate's O=)
  --readers-group <group>  the readers' group
Exit code: 0 printed, 2 bad arguments.`;

const OPTIONS = { env: { type: 'string' }, group: { type: 'string' }, 'readers-group': { type: 'string' } } as const;

/** `npm run ops -- role`: the RBAC of the live operations, for review or to apply. */
export const ROLE: CommandDefinition<typeof OPTIONS> = {
  name: 'ops role',
  usage: USAGE,
  options: OPTIONS,
  run(values, _positionals, context) {
    if (values.env === undefined) throw new UsageError('--env <environment> is required');
    const environment = environmentNamed(context.root, values.env);
    for (const option of ['group', 'readers-group'] as const) {
      if (values[option] !== undefined && values[option].trim() === '') throw new UsageError(`--${option} must name a group`);
    }
    if (values.group !== undefined && values.group === values['readers-group']) throw new UsageError('--readers-group must differ from --group: the operators hold the readers\' role already');
    const objects = operationsObjects(operationsScope(environment, loadPlatform()), {
      ...(values.group === undefined ? {} : { operators: values.group }),
      ...(values['readers-group'] === undefined ? {} : { readers: values['readers-group'] }),
    });
    const documents = objects.map(({ manifest, neededBy }) => {
      if (neededBy === undefined) return stringify(manifest);
      const document = new Document(manifest);
      neededBy.forEach((verbs, index) => {
        const node = document.getIn(['rules', index], true) as { commentBefore?: string } | undefined;
        if (node !== undefined) node.commentBefore = ` needed by: ${verbs.join('; ')}`;
      });
      return document.toString();
    });
    context.out(documents.join('---\n'));
    return 0;
  },
};
