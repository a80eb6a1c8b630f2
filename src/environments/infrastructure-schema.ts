import * as z from 'zod';
import { PRIVATE_NETWORKS } from '../contract/choices';
import { section } from './fields';
import { knownVersions, RELEASE_NAMES, type ReleaseName } from '../contract/release-versions';

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
  type: z.literal('self-signed-ca').meta({
    description: `A self-signed root CA inside the cluster signs every certificate (local: no public DNS); ClusterIssuer "${ISSUER_NAMES.selfSignedCa}".`,
  }),
});

const acmeIssuer = z.strictObject({
  type: z.literal('acme').meta({ description: "Let's Encrypt signs the certificates (ACME HTTP-01 through the Gateway)." }),
  directory: z.enum(['staging', 'production'], { error: 'must be "staging" or "production"' }).meta({
    description:
      `Let's Encrypt's staging directory (untrusted certificates, generous limits; ClusterIssuer "${ISSUER_NAMES.acmeStaging}") ` +
      `or production (ClusterIssuer "${ISSUER_NAMES.acmeProduction}").`,
  }),
  email: z
    .string({ error: 'is required and must be a string' })
    .regex(EMAIL, { error: 'must be an e-mail address' })
    .meta({ description: "Contact address Let's Encrypt writes to about expiring certificates." }),
});

export const ISSUER_TYPES = ['self-signed-ca', 'acme'] as const;

const issuerSchema = z.discriminatedUnion('type', [selfSignedCaIssuer, acmeIssuer], {
  error: (issue) => (issue.code === 'invalid_union' ? `must be one of ${ISSUER_TYPES.join(', ')}` : undefined),
});

const wholeNumberAtLeastOne = z
  .number({ error: 'must be a number' })
  .int({ error: 'must be a whole number' })
  .min(1, { error: 'must be at least 1' });

/** An IPv4 or IPv6 address range in CIDR notation, as a NetworkPolicy's ipBlock takes it. */
const cidr = z
  .union([z.cidrv4(), z.cidrv6()], { error: 'must be an IPv4 or IPv6 address range in CIDR notation such as "172.18.0.2/32"' })
  .meta({ description: 'An IPv4 or IPv6 address range in CIDR notation.' });

const networkSchema = section({
  apiServerCidrs: z
    .array(cidr, { error: 'must be a list of CIDRs' })
    .min(1, { error: 'must name at least one address range' })
    .meta({
      description:
        "Addresses of the cluster's Kubernetes API server, the only ones the operators' NetworkPolicies let them reach on 443 and 6443: the endpoints of the `kubernetes` Service " +
        `(kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes). Default: the private ranges ${PRIVATE_NETWORKS.join(', ')}.`,
    })
    .default([...PRIVATE_NETWORKS]),
  nodeCidrs: z
    .array(cidr, { error: 'must be a list of CIDRs' })
    .min(1, { error: 'must name at least one address range' })
    .meta({
      description:
        "Addresses of the cluster's nodes, the only ones Prometheus' NetworkPolicy lets it scrape the kubelets (10250) and node exporters (9100, host network) at. " +
        `Default: the private ranges ${PRIVATE_NETWORKS.join(', ')}.`,
    })
    .default([...PRIVATE_NETWORKS]),
});

/** One release's version: one the release table knows (src/contract/release-versions.ts). */
function releaseVersion(release: ReleaseName) {
  const known = knownVersions(release);
  return z
    .enum(known as [string, ...string[]], { error: `must be a version the release table knows (src/contract/release-versions.ts): ${known.join(', ')}` })
    .meta({ description: `The ${release} version this environment runs, one of ${known.join(', ')} (npm run upgrade changes it).` });
}

/** `infrastructure.versions`: every release's version, by release name (1.3.7: an explicit chart version per environment). */
const versionsSchema = section(Object.fromEntries(RELEASE_NAMES.map((release) => [release, releaseVersion(release)])) as { [release in ReleaseName]: z.ZodEnum<Record<string, string>> });

export const infrastructureSchema = section({
  issuer: issuerSchema.meta({
    description: `The environment's ClusterIssuer (type ${ISSUER_TYPES.join(' or ')}); each application's tls.clusterIssuer names it.`,
  }),
  gateway: section({
    replicas: wholeNumberAtLeastOne.meta({ description: "Envoy proxy pods of the environment's Gateway (sized through its EnvoyProxy), at least 1." }),
    serviceType: z
      .enum(['LoadBalancer', 'NodePort'], { error: 'must be "LoadBalancer" or "NodePort"' })
      .meta({ description: 'How the Gateway is reached: a cloud load balancer, or node ports on a workstation.' }),
  }).meta({ description: "The environment's Gateway (Envoy Gateway), which serves every application." }),
  monitoring: section({
    retention: z
      .string({ error: 'is required and must be a string' })
      .regex(RETENTION, { error: 'must be a whole number of hours or days such as "24h" or "15d"' })
      .meta({ description: 'How long Prometheus keeps samples: whole hours or days, e.g. "24h" or "15d".' }),
    alertmanagerReplicas: wholeNumberAtLeastOne.meta({
      description: 'Alertmanager pods, at least 1 (more than one forms a cluster that deduplicates notifications).',
    }),
  }).meta({ description: 'Prometheus and Alertmanager of the environment.' }),
  argoCd: section({
    highAvailability: z
      .boolean({ error: 'must be true or false' })
      .meta({
        description:
          "Install Argo CD from upstream's high-availability manifests (`manifests/ha/cluster-install`: several replicas of each component, Redis with Sentinel), " +
          'which need at least three nodes (Redis pods repel each other); false: the single-replica install (`manifests/cluster-install`). Default: false.',
      })
      .default(false),
  })
    .meta({ description: 'How Argo CD is installed from its release manifests (src/infrastructure/argo-cd-kustomization.ts). Default: the single-replica install.' })
    .default({ highAvailability: false }),
  versions: versionsSchema.meta({
    description:
      'The version of every infrastructure release this environment runs, by release name (src/infrastructure/releases.ts): ' +
      'moved by `npm run upgrade` in one environment, carried to the next by `npm run promote`.',
  }),
  network: networkSchema
    .meta({
      description: `Addresses of the cluster outside every namespace, which NetworkPolicies name by address. Default: the private ranges ${PRIVATE_NETWORKS.join(', ')} for each.`,
    })
    .default({ apiServerCidrs: [...PRIVATE_NETWORKS], nodeCidrs: [...PRIVATE_NETWORKS] }),
});

export type Infrastructure = z.output<typeof infrastructureSchema>;
export type Issuer = Infrastructure['issuer'];

/** The ClusterIssuer an issuer configuration renders. */
export function issuerName(issuer: Issuer): string {
  if (issuer.type === 'self-signed-ca') return ISSUER_NAMES.selfSignedCa;
  return issuer.directory === 'staging' ? ISSUER_NAMES.acmeStaging : ISSUER_NAMES.acmeProduction;
}
