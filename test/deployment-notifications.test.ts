import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INFRASTRUCTURE_RELEASES, releaseKustomizationPath } from '../src/infrastructure/releases';
import { parse } from 'yaml';
import { ALERT_ROUTING, DEPLOYMENT_NOTIFICATIONS } from '../src/contract/choices';
import { secretCatalog } from '../src/secrets/catalog';
import { loadEnvironments } from '../src/environments';
import { ENVIRONMENT_ORDER, ROOT, committedObjects, findObject } from './support';
import { committedArgoCdSettings } from './argo-cd-build';

// 1.6: stakeholders notified of significant deployments, through Argo CD's notifications
// controller. What the controller does with this configuration is tested on the real one in
// the e2e (test/e2e/converge.test.ts: the deployment of each application reaches the chat).

describe.each(ENVIRONMENT_ORDER)('deployment notifications in %s (1.6)', (environment) => {
  const objects = committedObjects(environment);
  const environmentSpec = loadEnvironments().find((e) => e.name === environment)!;
  const applications = environmentSpec.applications.map((application) => application.name);
  // As committed in the environment's kustomization of Argo CD (argocd-notifications-cm's patch).
  const notifications: any = committedArgoCdSettings(environment).notifications;

  it('subscribes each application\'s Application to every trigger, and no Application of the platform', () => {
    const subscriptions = (name: string) =>
      Object.keys(findObject(objects, 'Application', name).metadata.annotations ?? {})
        .filter((key) => key.startsWith(`${DEPLOYMENT_NOTIFICATIONS.subscribePrefix}.`))
        .sort();
    const expected = Object.keys(DEPLOYMENT_NOTIFICATIONS.triggers).map((trigger) => `${DEPLOYMENT_NOTIFICATIONS.subscribePrefix}.${trigger}.${DEPLOYMENT_NOTIFICATIONS.service}`).sort();
    for (const name of applications) expect(subscriptions(name), name).toEqual(expected);
    const others = objects.filter((o) => o.kind === 'Application' && !applications.includes(o.metadata.name));
    expect(others.length).toBeGreaterThan(0);
    for (const other of others) expect(subscriptions(other.metadata.name), other.metadata.name).toEqual([]);
  });

  it('defines the service, and a trigger with its template for sync succeeded, sync failed and health degraded', () => {
    const service = parse(notifications.notifiers[`service.webhook.${DEPLOYMENT_NOTIFICATIONS.service}`]);
    // The address is a key of the controller's Secret, never a URL in git.
    expect(service.url).toBe(`$${DEPLOYMENT_NOTIFICATIONS.secret.key}`);
    expect(Object.keys(notifications.triggers).sort()).toEqual(['trigger.on-health-degraded', 'trigger.on-sync-failed', 'trigger.on-sync-succeeded']);
    for (const [trigger, template] of Object.entries(DEPLOYMENT_NOTIFICATIONS.triggers)) {
      const [condition] = parse(notifications.triggers[`trigger.${trigger}`]);
      expect(condition.send).toEqual([template]);
      // Once per synced revision: a self-heal sync of the same commit posts nothing again.
      expect(condition.oncePer).toContain('syncResult?.revisions');
      const body = parse(notifications.templates[`template.${template}`]).webhook[DEPLOYMENT_NOTIFICATIONS.service];
      expect(body.method).toBe('POST');
      // A Slack-compatible message whose text is JSON-escaped by the template.
      expect(body.body).toMatch(/\{"text": \{\{ printf "%s \(%s\): [^"]+" \.app\.metadata\.name \$path .* \| toJson \}\}\}$/);
    }
    expect(parse(notifications.triggers['trigger.on-sync-failed'])[0].when).toContain("phase in ['Error', 'Failed']");
    expect(parse(notifications.triggers['trigger.on-health-degraded'])[0].when).toBe("app.status.health.status == 'Degraded'");
    expect(JSON.stringify(notifications)).not.toMatch(/https?:\/\//);
  });

  it('leaves the Secret to the platform: the chat\'s address again, synced with the monitoring Secrets into Argo CD\'s namespace', () => {
    // Upstream's empty argocd-notifications-secret is deleted by the kustomization (built: test/argo-cd-kustomization.test.ts).
    const kustomization = parse(fs.readFileSync(path.join(ROOT, releaseKustomizationPath(environment, INFRASTRUCTURE_RELEASES.argoCd), 'kustomization.yaml'), 'utf8'));
    expect(kustomization.patches.map((patch: { target?: unknown }) => patch.target)).toContainEqual({ kind: 'Secret', name: `^${DEPLOYMENT_NOTIFICATIONS.secret.name}$` });
    const secret = secretCatalog(environmentSpec).find((s) => s.name === DEPLOYMENT_NOTIFICATIONS.secret.name)!;
    expect(secret).toMatchObject({ group: 'monitoring', namespace: 'argocd' });
    expect(secret.keys[DEPLOYMENT_NOTIFICATIONS.secret.key]!.holds).toEqual({ value: `${ALERT_ROUTING.teamChat.secret.name}.${ALERT_ROUTING.teamChat.secret.key}` });
  });
});
