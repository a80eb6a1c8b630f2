import type { CommandGroup } from '../../tooling/cli';
import { BLUEGREEN } from './bluegreen';
import { CANARY } from './canary';
import { CHECK } from './check';
import { DRIFT } from './drift';
import { EMERGENCY } from './emergency';
import { OUTAGE } from './outage';
import { PAUSE, RESUME } from './pause';
import { behindProductionGate } from './production-gate';
import { ROLE } from './role';
import { ROLLBACK } from './rollback';
import { SILENCE } from './silence';
import { STATUS } from './status';
import { SYNC } from './sync';
import { UPGRADE_STATUS } from './upgrade-status';
import { VERIFY } from './verify';
import { VERSION } from './version';

const USAGE = `usage: npm run ops -- <verb> --env <environment> [--app <application>] [--context <context>] [--output text|json]

The contract's live procedures against an environment's cluster, through the Kubernetes
API with your kubeconfig (the official client library; no kubectl), and Argo CD through
its Application resources (as \`argocd --core\`: no Argo CD login). Every wait is bounded
by the contract's timeout and prints progress. \`role\` prints the RBAC the verbs need.
  status    every Application (sync, health, revision, last sync, pause), the workloads by strategy, their pods
  drift     what differs between git and the cluster, field by field
  sync      sync the application's Application, wait for it and the rollout, then verify
  verify    the Gateway and routes, the Service's endpoints, /health, /api/status, TLS
  version   each pod's version file, read inside its container, against the values file
  check     a platform component ready: infrastructure, database, broker (1.3.4-1.3.6), or one release (1.3.7)
  upgrade-status  each infrastructure release's deployed chart version, git's and the known ones (1.3.7)
  bluegreen the gates of a blue-green release: the new unit ready, its /health, the endpoints
  canary    the canary gates: describe and watch the Canary, promote or roll back through the load tester
  pause     stop automated sync and self-heal (root first), recording who and why
  resume    automated sync again
  rollback  1.5 on the live cluster: --level orchestrator (rollout undo), controller (Argo CD history),
            database (to a named migration) or package (a release's chart version)
  emergency 7, 7.2: outage (nodes, pods, scale out with sync paused, the ingress controller), restore (a
            database from its backup), crashloop (and its example fix), drain and uncordon a node
  silence   silence an alert for a duration with a comment, list or expire silences (Alertmanager)
  outage    outage communication: notify the team chat, the status page and the stakeholders
  role      the ClusterRole and Role the verbs need (and their bindings to a group), as YAML
\`npm run ops -- <verb> --help\` for a verb's options.
A verb that changes the cluster refuses an environment that does not sync automatically
(production) unless --confirm <environment> names it, before any request reaches the cluster.
Exit code: 0 the checked state holds, 1 it does not (named, with why), 2 bad arguments.`;

/** `npm run ops`: the live operations of an environment (docs/operations.md). */
export const OPS: CommandGroup = {
  name: 'ops',
  usage: USAGE,
  subcommands: behindProductionGate({ status: STATUS, drift: DRIFT, sync: SYNC, verify: VERIFY, version: VERSION, check: CHECK, bluegreen: BLUEGREEN, canary: CANARY, pause: PAUSE, resume: RESUME, rollback: ROLLBACK, emergency: EMERGENCY, silence: SILENCE, outage: OUTAGE, role: ROLE, 'upgrade-status': UPGRADE_STATUS }),
};
