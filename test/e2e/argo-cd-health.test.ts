import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { OPERATOR_SYNC_ANNOTATION } from '../../src/contract/choices';
import { CERTIFICATE_ISSUANCE_GRACE_SECONDS, CERTIFICATE_KIND, GATEWAY_KIND, MONITORING_STARTUP_GRACE_SECONDS, MONITORING_WORKLOAD_KINDS, healthCustomizations } from '../../src/infrastructure/argo-cd-health';
import { argoCdReleaseValues } from '../../src/infrastructure/releases';
import { locateToolchain } from '../../toolchain';
import { ROOT, temporaryDirectory } from '../support';

// The health checks the platform gives Argo CD, run by Argo CD itself: `argocd admin settings
// resource-overrides health` (Argo CD v3.6.1, built by toolchain/build.sh) reads the argocd-cm
// the argo-cd chart writes from the platform's values and assesses one object with the same
// Lua VM and libraries as the application controller (util/lua).

const argocd = locateToolchain(ROOT).bin('argocd', 'argocd');
const work = temporaryDirectory('platform-gitops-argocd-health-');
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** The argocd-cm ConfigMap as the chart writes it from `configs.cm`. */
function writeConfigMap(data: Record<string, string>): string {
  const file = path.join(work, `argocd-cm-${Object.keys(data).length}-${fs.readdirSync(work).length}.yaml`);
  fs.writeFileSync(file, stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'argocd-cm', namespace: 'argocd' }, data }));
  return file;
}

const platformConfigMap = writeConfigMap((argoCdReleaseValues() as { configs: { cm: Record<string, string> } }).configs.cm);

/** Argo CD's verdict on one object: its health status and message, or its error. */
function health(object: Record<string, unknown>, configMap = platformConfigMap): { status: string; message: string; error?: string } {
  const file = path.join(work, `object-${fs.readdirSync(work).length}.yaml`);
  fs.writeFileSync(file, stringify(object));
  const result = spawnSync(argocd, ['admin', 'settings', 'resource-overrides', 'health', file, '--argocd-cm-path', configMap], { encoding: 'utf8' });
  if (result.status !== 0) return { status: '', message: '', error: `${result.stdout}${result.stderr}` };
  const status = /^STATUS: (.*)$/m.exec(result.stdout)?.[1] ?? '';
  const message = /^MESSAGE: (.*)$/m.exec(result.stdout)?.[1] ?? '';
  return { status, message };
}

/** A Kubernetes timestamp (whole seconds, UTC) this many seconds ago. */
function secondsAgo(seconds: number): string {
  return new Date(Date.now() - seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

describe('a Prometheus or Alertmanager on Argo CD', () => {
  const kinds = MONITORING_WORKLOAD_KINDS.map((key) => key.replace(/^monitoring\.coreos\.com_/, ''));
  const workload = (kind: string, available?: Record<string, unknown>) => ({
    apiVersion: 'monitoring.coreos.com/v1',
    kind,
    metadata: { name: 'kube-prometheus-stack', namespace: 'monitoring' },
    ...(available ? { status: { conditions: [{ type: 'Reconciled', status: 'True', reason: '', lastTransitionTime: secondsAgo(5) }, { type: 'Available', ...available }] } } : {}),
  });

  it('covers both kinds the kube-prometheus-stack release runs', () => {
    expect(kinds).toEqual(['Prometheus', 'Alertmanager']);
  });

  it('is Degraded by Argo CD\'s built-in check while no pod is ready yet, which the platform\'s replaces', () => {
    const builtIn = writeConfigMap({});
    for (const kind of kinds) {
      expect(health(workload(kind, { status: 'False', reason: 'NoPodReady', message: '', lastTransitionTime: secondsAgo(5) }), builtIn).status, kind).toBe('Degraded');
    }
  });

  describe.each(kinds)('%s', (kind) => {
    it('is Progressing while the operator has not reported, Healthy once available', () => {
      expect(health(workload(kind)).status).toBe('Progressing');
      expect(health(workload(kind, { status: 'True', reason: '', lastTransitionTime: secondsAgo(5) }))).toEqual({ status: 'Healthy', message: 'All instances are available' });
    });

    it('is Progressing with no pod ready yet, within the grace, and says when it turns Degraded', () => {
      for (const reason of ['StatefulSetNotFound', 'NoPodReady']) {
        const since = secondsAgo(20);
        expect(health(workload(kind, { status: 'False', reason, message: '', lastTransitionTime: since })), reason).toEqual({
          status: 'Progressing',
          message: `${reason} since ${since} (Degraded ${MONITORING_STARTUP_GRACE_SECONDS} s after): ${reason}`,
        });
      }
      const pod = 'pod prometheus-0: containers with unready status: [prometheus]';
      expect(health(workload(kind, { status: 'False', reason: 'NoPodReady', message: pod, lastTransitionTime: secondsAgo(MONITORING_STARTUP_GRACE_SECONDS - 30) })).message).toContain(pod);
    });

    it('is Degraded once no pod has been ready for longer than the grace', () => {
      const verdict = health(workload(kind, { status: 'False', reason: 'NoPodReady', message: '', lastTransitionTime: secondsAgo(MONITORING_STARTUP_GRACE_SECONDS + 5) }));
      expect(verdict).toEqual({ status: 'Degraded', message: `NoPodReady for over ${MONITORING_STARTUP_GRACE_SECONDS} s: NoPodReady` });
    });

    it('is Degraded without a readable transition time, or for any other reason', () => {
      expect(health(workload(kind, { status: 'False', reason: 'NoPodReady', message: '' })).status).toBe('Degraded');
      expect(health(workload(kind, { status: 'False', reason: 'NoPodReady', message: '', lastTransitionTime: 'yesterday' })).status).toBe('Degraded');
      expect(health(workload(kind, { status: 'False', reason: 'Unknown', message: 'the operator failed', lastTransitionTime: secondsAgo(5) }))).toEqual({ status: 'Degraded', message: 'the operator failed' });
    });

    it('keeps Argo CD\'s built-in rule for some pods not ready: Progressing', () => {
      expect(health(workload(kind, { status: 'Degraded', reason: 'SomePodsNotReady', message: 'pod x-1: not ready', lastTransitionTime: secondsAgo(MONITORING_STARTUP_GRACE_SECONDS * 2) }))).toEqual({
        status: 'Progressing',
        message: 'pod x-1: not ready',
      });
    });

    it('needs the standard libraries: without them Argo CD cannot read the time', () => {
      const key = MONITORING_WORKLOAD_KINDS[kinds.indexOf(kind)]!;
      const withoutLibraries = writeConfigMap(Object.fromEntries(Object.entries(healthCustomizations()).filter(([name]) => name !== `resource.customizations.useOpenLibs.${key}`)));
      const verdict = health(workload(kind, { status: 'False', reason: 'NoPodReady', message: '', lastTransitionTime: secondsAgo(20) }), withoutLibraries);
      expect(verdict.error).toContain("with key 'match'");
    });
  });
});

describe('a cert-manager Certificate on Argo CD', () => {
  // The conditions cert-manager v1.21.2 writes (pkg/controller/certificates/readiness, trigger, issuing).
  const certificate = (...conditions: Record<string, unknown>[]) => ({
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'webapp-tls', namespace: 'webapp' },
    ...(conditions.length > 0 ? { status: { conditions } } : {}),
  });
  const notFound = (lastTransitionTime?: string) => ({
    type: 'Ready',
    status: 'False',
    reason: 'DoesNotExist',
    message: 'Issuing certificate as Secret does not exist',
    ...(lastTransitionTime === undefined ? {} : { lastTransitionTime }),
  });

  it('is Degraded by Argo CD\'s built-in check before cert-manager starts issuing it, which the platform\'s replaces', () => {
    expect(health(certificate(notFound(secondsAgo(1))), writeConfigMap({})).status).toBe('Degraded');
  });

  it('is Progressing while nothing is issued yet, within the grace, and says when it turns Degraded', () => {
    const since = secondsAgo(3);
    expect(health(certificate(notFound(since)))).toEqual({
      status: 'Progressing',
      message: `not issued yet, since ${since} (Degraded ${CERTIFICATE_ISSUANCE_GRACE_SECONDS} s after): Issuing certificate as Secret does not exist`,
    });
  });

  it('is Degraded when nothing issued it for longer than the grace, or without a readable time', () => {
    expect(health(certificate(notFound(secondsAgo(CERTIFICATE_ISSUANCE_GRACE_SECONDS + 5))))).toEqual({
      status: 'Degraded',
      message: `not issued for over ${CERTIFICATE_ISSUANCE_GRACE_SECONDS} s: Issuing certificate as Secret does not exist`,
    });
    expect(health(certificate(notFound())).status).toBe('Degraded');
  });

  it('is Degraded at once when an issuance failed, as Argo CD\'s built-in check', () => {
    const failed = { type: 'Issuing', status: 'False', reason: 'Failed', message: 'The certificate request has failed to complete and will be retried: RSA key size 1024 is too small', lastTransitionTime: secondsAgo(2) };
    expect(health(certificate(notFound(secondsAgo(2)), failed))).toEqual({ status: 'Degraded', message: 'Issuing certificate as Secret does not exist' });
    expect(health(certificate(notFound(secondsAgo(2)), failed), writeConfigMap({})).status).toBe('Degraded');
  });

  it('keeps the built-in verdicts otherwise: issuing Progressing, Ready Healthy, no verdict yet Progressing', () => {
    const issuing = { type: 'Issuing', status: 'True', reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist', lastTransitionTime: secondsAgo(2) };
    expect(health(certificate(notFound(secondsAgo(CERTIFICATE_ISSUANCE_GRACE_SECONDS * 2)), issuing))).toEqual({ status: 'Progressing', message: 'Issuing certificate as Secret does not exist' });
    const ready = { type: 'Ready', status: 'True', reason: 'Ready', message: 'Certificate is up to date and has not expired', lastTransitionTime: secondsAgo(2) };
    expect(health(certificate(ready))).toEqual({ status: 'Healthy', message: 'Certificate is up to date and has not expired' });
    expect(health(certificate())).toEqual({ status: 'Progressing', message: 'Waiting for certificate' });
    expect(health(certificate({ type: 'Ready', status: 'Unknown', reason: '', message: '' })).status).toBe('Progressing');
  });

  it('needs the standard libraries: without them Argo CD cannot read the time', () => {
    const withoutLibraries = writeConfigMap(Object.fromEntries(Object.entries(healthCustomizations()).filter(([name]) => name !== `resource.customizations.useOpenLibs.${CERTIFICATE_KIND}`)));
    expect(health(certificate(notFound(secondsAgo(3))), withoutLibraries).error).toContain("with key 'match'");
  });
});

describe('a Gateway on Argo CD', () => {
  // The status Envoy Gateway v1.9.1 writes (internal/gatewayapi/validate.go, status/).
  const condition = (type: string, status: string, reason: string, message: string, lastTransitionTime = secondsAgo(2)) => ({ type, status, reason, message, lastTransitionTime });
  const programmed = condition('Programmed', 'True', 'Programmed', 'Sending translated listener configuration to the data plane');
  const gateway = (...https: Record<string, unknown>[]) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'webapp', namespace: 'webapp' },
    status: {
      conditions: [condition('Accepted', 'True', 'Accepted', 'The Gateway has been scheduled by Envoy Gateway'), condition('Programmed', 'True', 'Programmed', 'Address assigned to the Gateway, 1/1 envoy replicas available')],
      listeners: [
        { name: 'http', conditions: [condition('Accepted', 'True', 'Accepted', 'Listener has been successfully translated'), condition('ResolvedRefs', 'True', 'ResolvedRefs', 'Listener references have been resolved'), programmed] },
        { name: 'https', conditions: https },
      ],
    },
  });
  const accepted = condition('Accepted', 'True', 'Accepted', 'Listener has been successfully translated');
  const invalid = condition('Programmed', 'False', 'Invalid', 'Listener is invalid, see other Conditions for details.');
  const missing = (lastTransitionTime?: string) => condition('ResolvedRefs', 'False', 'InvalidCertificateRef', 'certificate refs 0: Secret webapp/webapp-tls does not exist.', lastTransitionTime);

  it('is Degraded by Argo CD\'s built-in check while its certificate is being issued, which the platform\'s replaces', () => {
    expect(health(gateway(accepted, missing(), invalid), writeConfigMap({})).status).toBe('Degraded');
  });

  it('is Progressing while a listener\'s certificate Secret does not exist yet, within the grace, and says when it turns Degraded', () => {
    const since = secondsAgo(3);
    expect(health(gateway(accepted, missing(since), invalid))).toEqual({
      status: 'Progressing',
      message: `Listener https: certificate not issued yet, since ${since} (Degraded ${CERTIFICATE_ISSUANCE_GRACE_SECONDS} s after): certificate refs 0: Secret webapp/webapp-tls does not exist.`,
    });
  });

  it('is Degraded when the Secret is still missing after the grace, or without a readable time', () => {
    expect(health(gateway(accepted, missing(secondsAgo(CERTIFICATE_ISSUANCE_GRACE_SECONDS + 5)), invalid))).toEqual({
      status: 'Degraded',
      message: 'Listener: certificate refs 0: Secret webapp/webapp-tls does not exist.',
    });
    expect(health(gateway(accepted, { ...missing(), lastTransitionTime: undefined }, invalid)).status).toBe('Degraded');
  });

  it('is Degraded at once for a reference no issuance mends, as Argo CD\'s built-in check', () => {
    const refused = condition('ResolvedRefs', 'False', 'RefNotPermitted', 'certificate refs 0: Certificate ref to secret cert-manager/webapp-tls not permitted by any ReferenceGrant.');
    expect(health(gateway(accepted, refused, invalid))).toEqual({ status: 'Degraded', message: `Listener: ${refused.message}` });
    const notCertificate = condition('ResolvedRefs', 'False', 'InvalidCertificateRef', 'certificate refs 0: Secret webapp/webapp-tls must contain tls.crt and tls.key.');
    expect(health(gateway(accepted, notCertificate, invalid)).status).toBe('Degraded');
    const gatewayRefused = { ...gateway(accepted, programmed), status: { conditions: [condition('Accepted', 'False', 'InvalidParameters', 'EnvoyProxy webapp/webapp not found')] } };
    expect(health(gatewayRefused)).toEqual({ status: 'Degraded', message: 'EnvoyProxy webapp/webapp not found' });
  });

  it('keeps the built-in verdicts otherwise: programming Progressing, all resolved Healthy, no status yet Progressing', () => {
    expect(health(gateway(accepted, condition('ResolvedRefs', 'True', 'ResolvedRefs', 'Listener references have been resolved'), programmed))).toEqual({ status: 'Healthy', message: 'Gateway is healthy' });
    const pending = { ...gateway(accepted, programmed), status: { conditions: [condition('Programmed', 'False', 'NoResources', 'Deployment replicas unavailable')], listeners: [] } };
    expect(health(pending)).toEqual({ status: 'Progressing', message: 'Deployment replicas unavailable' });
    expect(health(gateway(accepted, condition('Programmed', 'Unknown', 'Pending', 'Waiting for controller')))).toEqual({ status: 'Progressing', message: 'Listener: Waiting for controller' });
    expect(health({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'webapp', namespace: 'webapp' } })).toEqual({ status: 'Progressing', message: 'Waiting for Gateway status' });
  });

  it('needs the standard libraries: without them Argo CD cannot read the time', () => {
    const withoutLibraries = writeConfigMap(Object.fromEntries(Object.entries(healthCustomizations()).filter(([name]) => name !== `resource.customizations.useOpenLibs.${GATEWAY_KIND}`)));
    expect(health(gateway(accepted, missing(), invalid), withoutLibraries).error).toContain("with key 'find'");
  });
});

describe('a child Application on Argo CD (the app of apps)', () => {
  const child = (status: Record<string, unknown>, annotations?: Record<string, string>) => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'child', namespace: 'argocd', ...(annotations ? { annotations } : {}) },
    status,
  });

  it('is Healthy only when synced, not mid-sync, and healthy', () => {
    expect(health(child({ sync: { status: 'Synced' }, health: { status: 'Healthy' } })).status).toBe('Healthy');
    expect(health(child({ sync: { status: 'OutOfSync' }, health: { status: 'Healthy' } }))).toEqual({ status: 'Progressing', message: 'healthy but not synced yet' });
    expect(health(child({ sync: { status: 'Synced' }, health: { status: 'Healthy' }, operationState: { phase: 'Running' } }))).toEqual({ status: 'Progressing', message: 'sync operation running' });
    expect(health(child({})).status).toBe('Progressing');
  });

  it('passes a child\'s own Degraded through, with its message', () => {
    expect(health(child({ sync: { status: 'Synced' }, health: { status: 'Degraded', message: 'Deployment x failed' } }))).toEqual({ status: 'Degraded', message: 'Deployment x failed' });
  });

  it('counts a child only an operator syncs by its health alone', () => {
    const annotations = { [OPERATOR_SYNC_ANNOTATION.key]: OPERATOR_SYNC_ANNOTATION.value };
    expect(health(child({ sync: { status: 'OutOfSync' }, health: { status: 'Healthy' } }, annotations))).toEqual({ status: 'Healthy', message: 'synced by an operator after review; sync status OutOfSync' });
  });
});
