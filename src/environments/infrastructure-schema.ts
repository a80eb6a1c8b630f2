import { z } from 'zod';
import { section } from './fields';

/**
 * The infrastructure section of an environment: how its certificates are issued and the
 * Helm values that differ between environments. Everything else about the infrastructure
 * is the same everywhere and lives in code (src/infrastructure/).
 */

/** ClusterIssuer names, by kind of issuer (the application's `tls.clusterIssuer` names one). */
export const ISSUER_NAMES = {
  selfSignedCa: 'local-ca',
  acmeStaging: 'letsencrypt-staging',
  acmeProduction: 'letsencrypt-production',
} as const;

/** ACME directories of Let's Encrypt (not in the contract: the public CA we use). */
export const ACME_DIRECTORIES = {
  staging: 'https://acme-staging-v02.api.letsencrypt.org/directory',
  production: 'https://acme-v02.api.letsencrypt.org/directory',
} as const;

const EMAIL = /^[A-Za-z0-9._%+-]+@[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
/** Prometheus retention: a whole number of hours or days. */
const RETENTION = /^[1-9]\d*[hd]$/;

const selfSignedCaIssuer = z.strictObject({
  /** A self-signed root CA inside the cluster signs every certificate (local: no public DNS). */
  type: z.literal('self-signed-ca'),
});

const acmeIssuer = z.strictObject({
  type: z.literal('acme'),
  /** Let's Encrypt's staging directory (untrusted certificates, generous limits) or production. */
  directory: z.enum(['staging', 'production'], { error: 'must be "staging" or "production"' }),
  /** Contact address Let's Encrypt writes to about expiring certificates. */
  email: z.string({ error: 'is required and must be a string' }).regex(EMAIL, { error: 'must be an e-mail address' }),
});

export const ISSUER_TYPES = ['self-signed-ca', 'acme'] as const;

const issuerSchema = z.discriminatedUnion('type', [selfSignedCaIssuer, acmeIssuer], {
  error: (issue) => (issue.code === 'invalid_union' ? `must be one of ${ISSUER_TYPES.join(', ')}` : undefined),
});

const wholeNumberAtLeastOne = z
  .number({ error: 'must be a number' })
  .int({ error: 'must be a whole number' })
  .min(1, { error: 'must be at least 1' });

export const infrastructureSchema = section({
  /** The environment's ClusterIssuer; its name must be `tls.clusterIssuer`. */
  issuer: issuerSchema,
  gateway: section({
    /** Envoy proxy pods of the environment's Gateway (sized through its EnvoyProxy). */
    replicas: wholeNumberAtLeastOne,
    /** How the Gateway is reached: a cloud load balancer, or node ports on a workstation. */
    serviceType: z.enum(['LoadBalancer', 'NodePort'], { error: 'must be "LoadBalancer" or "NodePort"' }),
  }),
  monitoring: section({
    /** How long Prometheus keeps samples, e.g. "24h" or "15d". */
    retention: z.string({ error: 'is required and must be a string' }).regex(RETENTION, {
      error: 'must be a whole number of hours or days such as "24h" or "15d"',
    }),
    /** Alertmanager pods (more than one forms a cluster that deduplicates notifications). */
    alertmanagerReplicas: wholeNumberAtLeastOne,
  }),
});

export type Infrastructure = z.output<typeof infrastructureSchema>;
export type Issuer = Infrastructure['issuer'];

/** The ClusterIssuer an issuer configuration renders. */
export function issuerName(issuer: Issuer): string {
  if (issuer.type === 'self-signed-ca') return ISSUER_NAMES.selfSignedCa;
  return issuer.directory === 'staging' ? ISSUER_NAMES.acmeStaging : ISSUER_NAMES.acmeProduction;
}
