import * as path from 'node:path';
import { type Platform, loadPlatform } from '../src/environments/platform';
import { CONVERGENCE_KINDS } from './convergence';
import { type ControlPlane, startControlPlane } from './control-plane';
import type { KubeClient } from './kube-client';
import { Pki } from './pki';
import type { RunContext } from './run-start';
import type { RunScope } from './run-scope';

/**
 * The kinds the stand-in controllers and the live containers read each pass, kept from
 * watches (KubeClient.watchKinds): a pass reads them from memory and starts at a change of
 * one of them, instead of listing every one of them each second.
 */
export const STAND_IN_KINDS = [
  'v1/Secret',
  'v1/ConfigMap',
  'v1/Pod',
  'v1/Service',
  'v1/PersistentVolumeClaim',
  'apps/v1/Deployment',
  'storage.k8s.io/v1/StorageClass',
  'gateway.networking.k8s.io/v1/Gateway',
  'kafka.strimzi.io/v1/Kafka',
  'kafka.strimzi.io/v1/KafkaNodePool',
  'kafka.strimzi.io/v1/KafkaTopic',
  'kafka.strimzi.io/v1/KafkaUser',
] as const;

/** Every kind the harness keeps from a watch: the stand-ins' and the convergence watch's. */
const WATCHED_KINDS = [...STAND_IN_KINDS, ...CONVERGENCE_KINDS] as const;

/** The control plane started, and what the later phases read of the platform. */
export interface StartedPlane {
  readonly platform: Platform;
  /** Argo CD's namespace. */
  readonly namespace: string;
  /** The run's certificates (the control plane's own CA in `plane.pki`). */
  readonly pki: Pki;
  readonly plane: ControlPlane;
  /** The administrator's client, keeping `WATCHED_KINDS` from watches. */
  readonly client: KubeClient;
}

/** Start the control plane (e2e/control-plane.ts) and watch the kinds the run reads; its client is closed at the end. */
export async function startPlane(context: RunContext, scope: RunScope): Promise<StartedPlane> {
  const { log, environment, toolchain, phaseEnded } = context;
  const { dir, supervisor } = scope;
  const platform = loadPlatform();
  const namespace = platform.controller.namespace;
  const pki = new Pki(path.join(dir, 'pki'));
  log(`e2e ${environment}: control plane (Kubernetes ${toolchain.versions.kubernetes}, etcd ${toolchain.versions.etcd}, kwok ${toolchain.versions.kwok})`);
  const plane = await startControlPlane({ toolchain, supervisor, dir, pki, namespace, egress: scope.egress, log });
  phaseEnded('control plane started');
  const { client } = plane;
  client.watchKinds(WATCHED_KINDS);
  scope.watching(client);
  return { platform, namespace, pki, plane, client };
}
