import { describe, expect, it } from 'vitest';
import { runningTagOf } from '../src/environments/running-tag';
import { committedObjects, ENVIRONMENT_ORDER, environmentFilesCopy, environmentsOf, findObject, type K8sObject, projectEnvironments, renderToObjects } from './support';

function objectsOf(environment: string): K8sObject[] {
  return [...renderToObjects(projectEnvironments()[environment]!).values()].flat();
}

describe('the smoke test as a PostSync hook (4.1)', () => {
  it.each(ENVIRONMENT_ORDER)('renders a PostSync hook Job in %s, replaced before each new run', (environment) => {
    const job = findObject(objectsOf(environment), 'Job', 'webapp-smoke');
    expect(job.metadata.namespace).toBe('webapp');
    expect(job.metadata.annotations).toEqual({
      'argocd.argoproj.io/hook': 'PostSync',
      'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
    });
    expect(job.spec.backoffLimit).toBe(0);
    // 10 + 10 + 10 + 20 + 20 seconds of steps, plus 60 s to pull and start.
    expect(job.spec.activeDeadlineSeconds).toBe(130);
  });

  it('runs the smoke image of the version each environment serves', () => {
    const images = Object.fromEntries(
      ENVIRONMENT_ORDER.map((env) => [env, findObject(objectsOf(env), 'Job', 'webapp-smoke').spec.template.spec.containers[0].image]),
    );
    const environments = projectEnvironments();
    expect(images).toEqual(
      Object.fromEntries(
        ENVIRONMENT_ORDER.map((env) => {
          const { image } = environments[env]!;
          return [env, `${image.registry}/${image.project}/webapp-smoke:${runningTagOf(environments[env]!)}`];
        }),
      ),
    );
  });

  it('follows the active blue-green unit, not a newer inactive one', () => {
    const files = environmentFilesCopy();
    files.staging.webapp.strategy.blueGreen = { active: 'blue', units: { blue: { tag: 'v1.0.0' }, green: { tag: 'v2.0.0' } } };
    const staging = environmentsOf(files).find((env) => env.name === 'staging')!;
    const job = findObject([...renderToObjects(staging).values()].flat(), 'Job', 'webapp-smoke');
    expect(job.spec.template.spec.containers[0].image).toBe('registry.example.com/platform/webapp-smoke:v1.0.0');
    files.staging.webapp.strategy.blueGreen.active = 'green';
    const switched = environmentsOf(files).find((env) => env.name === 'staging')!;
    const after = findObject([...renderToObjects(switched).values()].flat(), 'Job', 'webapp-smoke');
    expect(after.spec.template.spec.containers[0].image).toBe('registry.example.com/platform/webapp-smoke:v2.0.0');
  });

  it('calls the application Service inside the cluster, the database and the contract broker address from its namespace', () => {
    const container = findObject(objectsOf('testing'), 'Job', 'webapp-smoke').spec.template.spec.containers[0];
    expect(container.args).toEqual(['--base-url', 'http://webapp.webapp.svc.cluster.local']);
    const plain = Object.fromEntries(container.env.filter((e: any) => 'value' in e).map((e: any) => [e.name, e.value]));
    expect(plain).toEqual({
      DATABASE_HOST: 'mssql.database.svc.cluster.local',
      DATABASE_PORT: '1433',
      KAFKA_BOOTSTRAP_SERVERS: 'kafka-cluster-kafka-bootstrap.kafka.svc.cluster.local:9092',
    });
  });

  it('takes every credential from the Secret webapp-smoke by key, never as a value', () => {
    const container = findObject(objectsOf('staging'), 'Job', 'webapp-smoke').spec.template.spec.containers[0];
    const fromSecret = container.env.filter((e: any) => e.valueFrom !== undefined);
    expect(fromSecret.map((e: any) => e.name)).toEqual(['SMOKE_USERNAME', 'SMOKE_PASSWORD', 'DATABASE_USER', 'DATABASE_PASSWORD', 'KAFKA_USERNAME', 'KAFKA_PASSWORD']);
    for (const variable of fromSecret) {
      expect(variable.valueFrom).toEqual({ secretKeyRef: { name: 'webapp-smoke', key: variable.name } });
    }
    for (const env of ENVIRONMENT_ORDER) {
      expect(committedObjects(env).filter((o) => o.kind === 'Secret')).toEqual([]);
    }
  });

  it('runs restricted, with requests, limits and the registry pull secret', () => {
    const pod = findObject(objectsOf('production'), 'Job', 'webapp-smoke').spec.template.spec;
    const container = pod.containers[0];
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.imagePullSecrets).toEqual([{ name: 'registry-pull' }]);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.resources).toEqual({ requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '250m', memory: '192Mi' } });
    expect(container.image).toMatch(/:v\d+\.\d+\.\d+$/);
  });

  it('is not selected by the application Service', () => {
    const objects = objectsOf('testing');
    const job = findObject(objects, 'Job', 'webapp-smoke');
    const service = findObject(objects, 'Service', 'webapp');
    const podLabels = job.spec.template.metadata.labels as Record<string, string>;
    const selected = Object.entries(service.spec.selector as Record<string, string>).every(([k, v]) => podLabels[k] === v);
    expect(selected).toBe(false);
  });

  it('may reach only DNS, the application on 8080 and the database and broker ports', () => {
    const policy = findObject(objectsOf('testing'), 'NetworkPolicy', 'webapp-smoke');
    expect(policy.spec.podSelector).toEqual({ matchLabels: { app: 'webapp-smoke' } });
    expect(policy.spec.ingress).toEqual([]);
    const ports = policy.spec.egress.map((rule: any) => rule.ports.map((p: any) => `${p.protocol}/${p.port}`));
    expect(ports).toEqual([['UDP/53', 'TCP/53'], ['TCP/8080'], ['TCP/1433', 'TCP/9092']]);
    expect(policy.spec.egress[1].to).toEqual([{ podSelector: {} }]);
  });
});
