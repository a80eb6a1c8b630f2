import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { argoCdReleaseValues } from '../src/infrastructure/releases';
import { SOPS_PLUGIN_GENERATE } from '../src/infrastructure/argo-cd-values';
import { ENVIRONMENT_ORDER } from './support';
import { committedArgoCdSettings } from './argo-cd-build';

// The sops plugin runs in a sidecar of Argo CD's repository server with the environment's age
// key mounted (5.3): whatever its script or container does, it does beside the private key.
// So what runs there is pinned here. A change to it (the script, the image, the command, the
// environment, the mounts) fails this file until the test is edited with it, in the same
// reviewed commit; and the `argocd` Application that carries it is synced by an operator, never
// automatically (test/gitops.test.ts). The script is SOPS_PLUGIN_GENERATE, run below on the
// decrypted documents it must refuse; its SHA-256:
const REVIEWED_SCRIPT_SHA256 = 'b73770ed93388d95d6ff3138bdbf7af28265001b865d49656127a0ebdfffc66b';

/**
 * SHA-256 of everything that runs beside the key, as rendered: the plugin's definition and the
 * sidecar container, its volumes included (keys in order). After a reviewed change, the new
 * value is the failing test's "Received" one.
 */
const REVIEWED_SURFACE_SHA256 = '730f8230eb7135f215b543be9f7a8e933d0be54335b028d1be3100c26abf9187';

/** The plugin's definition (argocd-cmp-cm) and the sidecar that runs it, from the settings of Argo CD. */
function pluginSurface(values: any): unknown {
  const sidecar = values.repoServer.extraContainers.find((container: any) => container.name === 'sops');
  return { plugin: values.configs.cmp.plugins.sops, sidecar, volumes: values.repoServer.volumes };
}

/** JSON with every object's keys in order: the rendered file and the values object hash alike. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

const sha256 = (value: unknown) => createHash('sha256').update(canonical(value)).digest('hex');

describe('what runs beside the age key', () => {
  it('is the reviewed plugin script, exactly', () => {
    const values = argoCdReleaseValues() as any;
    expect(values.configs.cmp.plugins.sops.generate.command).toEqual(['sh', '-c', SOPS_PLUGIN_GENERATE]);
    expect(createHash('sha256').update(SOPS_PLUGIN_GENERATE).digest('hex')).toBe(REVIEWED_SCRIPT_SHA256);
  });

  it('is the reviewed plugin and sidecar, pinned by hash', () => {
    expect(sha256(pluginSurface(argoCdReleaseValues()))).toBe(REVIEWED_SURFACE_SHA256);
  });

  it.each(ENVIRONMENT_ORDER)('is what %s renders into its kustomization of Argo CD', (environment) => {
    const values = committedArgoCdSettings(environment);
    expect((values.configs.cmp.plugins.sops as any).generate.command).toEqual(['sh', '-c', SOPS_PLUGIN_GENERATE]);
    expect(sha256(pluginSurface(values))).toBe(REVIEWED_SURFACE_SHA256);
  });
});
