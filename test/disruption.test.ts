import { describe, expect, it } from 'vitest';
import { BROKER } from '../src/contract/contract';
import { STRIMZI } from '../src/contract/upstream';
import { ENVIRONMENT_ORDER, committedObjects, findObject } from './support';

// Convergence item 8: every unit of the application and the Kafka brokers get a
// PodDisruptionBudget (one pod evicted at a time) and a topology spread across nodes.


describe.each(ENVIRONMENT_ORDER)('disruption budgets and spread in %s', (name) => {
  const objects = committedObjects(name);
  const deployments = objects.filter((o) => o.kind === 'Deployment');
  const canary = objects.find((o) => o.kind === 'Canary');

  it('gives every application Deployment a PodDisruptionBudget of one pod over the pods that serve traffic', () => {
    expect(deployments.length).toBeGreaterThan(0);
    for (const deployment of deployments) {
      const budget = findObject(objects, 'PodDisruptionBudget', deployment.metadata.name);
      expect(budget.apiVersion).toBe('policy/v1');
      expect(budget.spec.maxUnavailable, deployment.metadata.name).toBe(1);
      // Canary: Flagger serves traffic from `<target>-primary`, whose pods it labels
      // `app: <target>-primary` (fluxcd/flagger v1.44.0 pkg/canary/deployment_controller.go,
      // primaryLabelValue); the target itself is scaled to zero between analyses.
      const expected = canary?.spec.targetRef.name === deployment.metadata.name
        ? { app: `${canary.spec.targetRef.name}-primary` }
        : deployment.spec.selector.matchLabels;
      expect(budget.spec.selector, deployment.metadata.name).toEqual({ matchLabels: expected });
    }
  });

  // Kubernetes, "Pod Topology Spread Constraints": matchLabelKeys adds the incoming pod's
  // values of those keys to the selector, so one constraint spreads each unit (and Flagger's
  // primary copy of the template) by itself.
  it('spreads every application Deployment\'s pods across nodes without refusing to schedule', () => {
    for (const deployment of deployments) {
      expect(deployment.spec.template.spec.topologySpreadConstraints, deployment.metadata.name).toEqual([
        {
          maxSkew: 1,
          topologyKey: 'kubernetes.io/hostname',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchExpressions: [{ key: 'pod-template-hash', operator: 'Exists' }] },
          matchLabelKeys: ['app', 'version'],
        },
      ]);
      // The API server refuses a pod whose constraint names one key in both (e2e cluster).
      const [constraint] = deployment.spec.template.spec.topologySpreadConstraints;
      const selected = constraint.labelSelector.matchExpressions.map((e: { key: string }) => e.key);
      expect(constraint.matchLabelKeys.filter((k: string) => selected.includes(k))).toEqual([]);
    }
  });

  // Strimzi creates the brokers' PodDisruptionBudget from `spec.kafka.template` and the
  // pods from the node pool's `spec.template.pod` (strimzi-kafka-operator 1.2.0
  // api/.../template/PodDisruptionBudgetTemplate.java; pods labelled strimzi.io/cluster and
  // strimzi.io/pool-name: operator-common/.../model/Labels.java).
  it('lets Strimzi evict one broker at a time and spread the brokers across nodes', () => {
    const kafka = findObject(objects, 'Kafka', BROKER.clusterName);
    expect(kafka.spec.kafka.template.podDisruptionBudget).toEqual({ maxUnavailable: 1 });
    const pool = findObject(objects, 'KafkaNodePool', STRIMZI.nodePool);
    expect(pool.spec.template.pod.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'kubernetes.io/hostname',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: { 'strimzi.io/cluster': BROKER.clusterName, 'strimzi.io/pool-name': STRIMZI.nodePool } },
      },
    ]);
  });
});
