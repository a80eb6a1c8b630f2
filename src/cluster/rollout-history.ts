import { RefusedError } from '../base/errors';
import { parseImageReference } from '../contract/naming';
import type { ClusterConnection, LiveObject } from './connection';

/** The annotation a Deployment and its ReplicaSets carry with the rollout revision (Kubernetes' deployment controller). */
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
/** The label the deployment controller adds to a ReplicaSet's pod template, left out when a template is restored. */
const POD_TEMPLATE_HASH = 'pod-template-hash';

/** One revision of a Deployment's rollout: the ReplicaSet that holds its pod template. */
export interface RolloutRevision {
  readonly revision: number;
  readonly replicaSet: string;
  /** The image tag of its first container. */
  readonly tag: string;
  readonly replicas: number;
  readonly template: Record<string, any>;
}

/** The Deployment's revisions, oldest first (`kubectl rollout history`), and the current one. */
export async function rolloutHistory(cluster: ClusterConnection, namespace: string, deployment: string): Promise<{ current: number; revisions: RolloutRevision[] }> {
  const live = await cluster.get('apps/v1', 'Deployment', deployment, namespace);
  if (live === undefined) throw new RefusedError(`Deployment ${namespace}/${deployment} does not exist`);
  const owned = (await cluster.list('apps/v1', 'ReplicaSet', namespace)).filter((rs) =>
    (rs.metadata.ownerReferences ?? []).some((owner) => owner.kind === 'Deployment' && owner.name === deployment),
  );
  const revisions = owned
    .map((rs: LiveObject): RolloutRevision => {
      const image = String(rs['spec']?.template?.spec?.containers?.[0]?.image ?? '');
      return {
        revision: Number(rs.metadata.annotations?.[REVISION_ANNOTATION] ?? 0),
        replicaSet: rs.metadata.name,
        tag: parseImageReference(image).tag ?? image,
        replicas: Number(rs['status']?.replicas ?? 0),
        template: rs['spec']?.template ?? {},
      };
    })
    .sort((a, b) => a.revision - b.revision);
  return { current: Number(live.metadata.annotations?.[REVISION_ANNOTATION] ?? 0), revisions };
}

/**
 * The revision a rollback of Deployment `id` goes to: `toRevision`, else the newest before the
 * current one (as `kubectl rollout undo`); refused, naming its revisions, when there is none.
 */
export function rollbackRevision(id: string, history: { readonly current: number; readonly revisions: readonly RolloutRevision[] }, toRevision: number | undefined): RolloutRevision {
  const { current, revisions } = history;
  const target = toRevision === undefined ? revisions.filter((r) => r.revision < current).at(-1) : revisions.find((r) => r.revision === toRevision);
  if (target === undefined) {
    const known = revisions.map((r) => r.revision).join(', ') || 'none';
    throw new RefusedError(`Deployment ${id}: ${toRevision === undefined ? `no revision before the current one (${current})` : `no revision ${toRevision}`}; its revisions: ${known}`);
  }
  return target;
}

/** A pod template without the label the deployment controller adds: what two revisions compare by. */
function withoutHash(template: Record<string, any>): Record<string, any> {
  const copy = structuredClone(template);
  if (copy['metadata']?.labels) delete copy['metadata'].labels[POD_TEMPLATE_HASH];
  return copy;
}

/**
 * Roll a Deployment back to `toRevision` (default: the one before the current), as `kubectl
 * rollout undo` does (k8s.io/kubectl v0.36.3 pkg/polymorphichelpers/rollback.go,
 * DeploymentRollbacker): the revision's pod template, without its pod-template-hash label,
 * replaces the Deployment's (a JSON patch), and the controller rolls it out as a new revision.
 * Unlike kubectl, the Deployment's own annotations are left as they are.
 */
export async function undoRollout(cluster: ClusterConnection, namespace: string, deployment: string, toRevision?: number): Promise<{ from: number; to: RolloutRevision; skipped: boolean }> {
  const { current, revisions } = await rolloutHistory(cluster, namespace, deployment);
  const target = rollbackRevision(`${namespace}/${deployment}`, { current, revisions }, toRevision);
  const live = (await cluster.get('apps/v1', 'Deployment', deployment, namespace))!;
  if (live['spec']?.paused === true) throw new RefusedError(`Deployment ${namespace}/${deployment} is paused: resume its rollout first`);
  const template = withoutHash(target.template);
  if (JSON.stringify(withoutHash(live['spec']?.template ?? {})) === JSON.stringify(template)) return { from: current, to: target, skipped: true };
  await cluster.jsonPatch('apps/v1', 'Deployment', deployment, namespace, [{ op: 'replace', path: '/spec/template', value: template }]);
  return { from: current, to: target, skipped: false };
}
