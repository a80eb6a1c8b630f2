import { POLICY_EXEMPTION_PREFIX } from '../contract/choices';
import { escapeRegExp } from '../base/regexp';
import { IMAGE_TAG_PATTERN } from '../contract/contract';
import {
  containersOf,
  LONG_RUNNING_KINDS,
  type LocatedObject,
  type ManifestObject,
  namespaceOf,
  parseImage,
  type PodTemplate,
  podTemplateOf,
} from './manifests';

/**
 * Policy rules over the rendered objects of one environment, in the spirit of kube-linter
 * and Polaris: each rule has a name (the exemption annotation uses it) and a reason (the
 * docs/validation.md lists them). A rule reports what to change, on the object that has to change.
 */

/** cert-manager's API group, which an `issuerRef` without a group means (cert-manager v1.21.2 pkg/api/util/issuers.go `IssuerGroup`). */
const CERT_MANAGER_GROUP = 'cert-manager.io';

/** What the rules need to know about the environment a folder of `dist/` renders. */
export interface PolicyContext {
  /** The environment's applications, each with where its images live. */
  readonly applications: readonly PolicyApplication[];
}

/** One application of an environment: its images are `<registry>/<project>/<name>[-suffix]`. */
export interface PolicyApplication {
  /** Private registry host of the application's images (`registry.example.com`). */
  readonly registry: string;
  /** Project path of the application's images inside the registry. */
  readonly project: string;
  /** Application name. */
  readonly name: string;
}

/** One violation of a rule by one object, before exemptions. */
export interface Violation {
  readonly subject: LocatedObject;
  readonly message: string;
}

export interface PolicyRule {
  readonly name: string;
  /** `object`: judges each object alone; `environment`: relates objects of one environment. */
  readonly scope: 'object' | 'environment';
  /** Why the rule exists: what goes wrong in a cluster without it. */
  readonly reason: string;
  check(objects: readonly LocatedObject[], context: PolicyContext | undefined): Violation[];
}

interface Workload {
  readonly located: LocatedObject;
  readonly template: PodTemplate;
}

function workloadsOf(objects: readonly LocatedObject[]): Workload[] {
  const workloads: Workload[] = [];
  for (const located of objects) {
    const template = podTemplateOf(located.object);
    if (template !== undefined) workloads.push({ located, template });
  }
  return workloads;
}

function ofKind(objects: readonly LocatedObject[], kind: string): LocatedObject[] {
  return objects.filter((located) => located.object.kind === kind);
}

function isEmptySelector(selector: unknown): boolean {
  if (selector === undefined || selector === null) return true;
  const { matchLabels, matchExpressions } = selector as { matchLabels?: object; matchExpressions?: unknown[] };
  return Object.keys(matchLabels ?? {}).length === 0 && (matchExpressions ?? []).length === 0;
}

function nonEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

/**
 * A check of every container (and init container) of every workload; `problem` returns
 * what to change for one container, or undefined when it passes.
 */
function perContainer(
  problem: (container: Record<string, any>, pod: Record<string, any>) => string | undefined,
  options: { longRunningOnly?: boolean; initContainers?: boolean } = {},
) {
  return (objects: readonly LocatedObject[]): Violation[] => {
    const violations: Violation[] = [];
    for (const { located, template } of workloadsOf(objects)) {
      if (options.longRunningOnly && !LONG_RUNNING_KINDS.has(String(located.object.kind))) continue;
      for (const ref of containersOf(template.spec)) {
        if (ref.init && options.initContainers === false) continue;
        const message = problem(ref.container, template.spec);
        if (message !== undefined) violations.push({ subject: located, message: `${ref.label}: ${message}` });
      }
    }
    return violations;
  };
}

/** A field of the container's securityContext, else of the pod's (where both exist). */
function effective(container: Record<string, any>, pod: Record<string, any>, field: string): any {
  return container.securityContext?.[field] ?? pod.securityContext?.[field];
}

const RESOURCE_FIELDS = ['requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'] as const;

/** Capabilities restricted Pod Security lets a container add. */
const ADDABLE_CAPABILITIES: ReadonlySet<string> = new Set(['NET_BIND_SERVICE']);

/** Flagger's defaults for `spec.service` of a Canary (flagger.app/v1beta1). */
const FLAGGER_DEFAULT_PORT_NAME = 'http';
const FLAGGER_SERVICE_SUFFIXES = ['', '-primary', '-canary'] as const;

interface ServicePort {
  readonly port?: number;
  readonly name?: string;
}

/**
 * The Services an environment provides, by `<namespace>/<name>`: those rendered, and those
 * Flagger creates for each Canary. In canary mode the chart renders no Service: Flagger
 * generates `<service.name>` (the stable address its HTTPRoute uses), `<service.name>-primary`
 * and `<service.name>-canary`, each a ClusterIP with `spec.service.port` named
 * `spec.service.portName` (default `http`); `service.name` defaults to the target's name.
 */
function providedServices(objects: readonly LocatedObject[]): Map<string, ServicePort[]> {
  const services = new Map<string, ServicePort[]>();
  for (const { object } of ofKind(objects, 'Service')) {
    services.set(`${namespaceOf(object)}/${object.metadata?.name}`, object.spec?.ports ?? []);
  }
  for (const { object } of ofKind(objects, 'Canary')) {
    if (typeof object.apiVersion !== 'string' || !object.apiVersion.startsWith('flagger.app/')) continue;
    const base = object.spec?.service?.name ?? object.spec?.targetRef?.name;
    const port: ServicePort = { port: object.spec?.service?.port, name: object.spec?.service?.portName ?? FLAGGER_DEFAULT_PORT_NAME };
    if (typeof base !== 'string') continue;
    for (const suffix of FLAGGER_SERVICE_SUFFIXES) services.set(`${namespaceOf(object)}/${base}${suffix}`, [port]);
  }
  return services;
}

/**
 * The Service backends of an HTTPRoute: `backendRefs` whose group is the core group and kind
 * is Service (Gateway API's defaults), in the route's namespace unless they name another.
 */
function routeBackends(route: ManifestObject): { name: string; namespace: string; port: number | undefined }[] {
  const backends: { name: string; namespace: string; port: number | undefined }[] = [];
  for (const rule of route.spec?.rules ?? []) {
    for (const ref of rule?.backendRefs ?? []) {
      if ((ref?.group ?? '') !== '' || (ref?.kind ?? 'Service') !== 'Service' || typeof ref?.name !== 'string') continue;
      backends.push({ name: ref.name, namespace: ref.namespace ?? namespaceOf(route), port: ref.port });
    }
  }
  return backends;
}

function isDefaultDeny(policy: ManifestObject): boolean {
  const spec = policy.spec ?? {};
  const types: unknown[] = spec.policyTypes ?? [];
  return (
    isEmptySelector(spec.podSelector) &&
    types.includes('Ingress') &&
    types.includes('Egress') &&
    !nonEmptyList(spec.ingress) &&
    !nonEmptyList(spec.egress)
  );
}

function imagesOf(spec: Record<string, any>): string[] {
  return containersOf(spec)
    .map((ref) => ref.container.image)
    .filter((image): image is string => typeof image === 'string');
}

/** The rules, in the order findings are listed. */
export const RULES: readonly PolicyRule[] = [
  {
    name: 'probes',
    scope: 'object',
    reason:
      'Without a readiness probe a Service sends traffic to pods that cannot serve yet and a rollout cannot tell a broken version; without a liveness probe a hung process is never restarted.',
    check: perContainer(
      (container) => {
        const missing = ['readinessProbe', 'livenessProbe'].filter((probe) => container[probe] === undefined);
        return missing.length > 0 ? `add ${missing.join(' and ')} (long-running containers need both)` : undefined;
      },
      { longRunningOnly: true, initContainers: false },
    ),
  },
  {
    name: 'resources',
    scope: 'object',
    reason:
      'Requests let the scheduler place pods where they fit; limits keep one container from starving its node. Unset, a pod is best-effort and evicted first.',
    check: perContainer((container) => {
      const missing = RESOURCE_FIELDS.filter((field) => {
        const [group, resource] = field.split('.') as [string, string];
        return container.resources?.[group]?.[resource] === undefined;
      });
      return missing.length > 0 ? `set resources.${missing.join(', resources.')}` : undefined;
    }),
  },
  {
    name: 'run-as-non-root',
    scope: 'object',
    reason: 'A process running as root in a container is root on the node after any container escape (restricted Pod Security).',
    check: perContainer((container, pod) => {
      if (effective(container, pod, 'runAsUser') === 0) return 'runs as user 0: set a non-zero runAsUser';
      return effective(container, pod, 'runAsNonRoot') === true
        ? undefined
        : 'set securityContext.runAsNonRoot: true (on the container or the pod)';
    }),
  },
  {
    name: 'no-privilege-escalation',
    scope: 'object',
    reason: 'setuid binaries and privileged mode let a process gain more rights than it started with (restricted Pod Security).',
    check: perContainer((container) => {
      if (container.securityContext?.privileged === true) return 'remove securityContext.privileged: true';
      return container.securityContext?.allowPrivilegeEscalation === false
        ? undefined
        : 'set securityContext.allowPrivilegeEscalation: false';
    }),
  },
  {
    name: 'drop-all-capabilities',
    scope: 'object',
    reason: "Linux capabilities are root's powers in pieces; a container that needs none should hold none (restricted Pod Security).",
    check: perContainer((container) => {
      const capabilities = container.securityContext?.capabilities ?? {};
      const added = ((capabilities.add ?? []) as string[]).filter((capability) => !ADDABLE_CAPABILITIES.has(capability));
      if (added.length > 0) return `remove securityContext.capabilities.add ${added.join(', ')} (only NET_BIND_SERVICE may be added)`;
      return ((capabilities.drop ?? []) as string[]).includes('ALL') ? undefined : 'set securityContext.capabilities.drop: [ALL]';
    }),
  },
  {
    name: 'seccomp-runtime-default',
    scope: 'object',
    reason: "The runtime's default seccomp profile blocks system calls a container has no business making (restricted Pod Security).",
    check: perContainer((container, pod) =>
      effective(container, pod, 'seccompProfile')?.type === 'RuntimeDefault'
        ? undefined
        : 'set securityContext.seccompProfile.type: RuntimeDefault (on the container or the pod)',
    ),
  },
  {
    name: 'read-only-root-filesystem',
    scope: 'object',
    reason:
      'A writable image filesystem lets an intruder change the program it runs and hides state in the container; writes belong in declared volumes.',
    check: perContainer((container) =>
      container.securityContext?.readOnlyRootFilesystem === true
        ? undefined
        : 'set securityContext.readOnlyRootFilesystem: true and mount a volume where it must write (or exempt it with the reason)',
    ),
  },
  {
    name: 'image-tag',
    scope: 'object',
    reason: 'An untagged or `latest` image changes under the same manifest: the rendered diff no longer says what runs, and a rollback may not go back.',
    check: perContainer((container) => {
      const image = container.image;
      if (typeof image !== 'string' || image === '') return 'set an image';
      const { tag, digest } = parseImage(image);
      if (tag === 'latest') return `image ${image} uses the tag "latest": pin a version tag`;
      if (tag === undefined && digest === undefined) return `image ${image} has no tag: pin a version tag`;
      return undefined;
    }),
  },
  {
    name: 'application-image',
    scope: 'object',
    reason:
      "The application's images are promoted between environments by tag (2.1, 9): `<registry>/<project>/<application>[-suffix]:v<major>.<minor>.<patch>`, so every environment names its version the same way.",
    check(objects, context) {
      if (context === undefined) return [];
      return perContainer((container) => {
        if (typeof container.image !== 'string') return undefined;
        const { repository, tag } = parseImage(container.image);
        const prefixOf = (app: PolicyApplication) => `${app.registry}/${app.project}/`;
        const candidates = context.applications.filter((app) => repository.startsWith(prefixOf(app)));
        if (candidates.length === 0) return undefined;
        const named = candidates.some((app) => new RegExp(`^${escapeRegExp(app.name)}(?:-[a-z0-9]+)*$`).test(repository.slice(prefixOf(app).length)));
        if (!named) {
          const names = candidates.map((app) => `${app.name} or ${app.name}-<suffix>`).join(', ');
          return `image ${container.image} is in ${prefixOf(candidates[0]!)} but not named ${names}`;
        }
        return tag !== undefined && IMAGE_TAG_PATTERN.test(tag)
          ? undefined
          : `image ${container.image} must be tagged v<major>.<minor>.<patch>`;
      })(objects);
    },
  },
  {
    name: 'service-selector',
    scope: 'environment',
    reason: 'A Service whose selector matches no pod has no endpoints: its clients and the HTTPRoute get errors (7: a 503 from the Gateway).',
    check(objects) {
      const workloads = workloadsOf(objects);
      const violations: Violation[] = [];
      for (const located of ofKind(objects, 'Service')) {
        const { spec } = located.object;
        const selector: Record<string, string> = spec?.selector ?? {};
        if (spec?.type === 'ExternalName' || Object.keys(selector).length === 0) continue;
        const namespace = namespaceOf(located.object);
        const matched = workloads.some(
          ({ located: workload, template }) =>
            namespaceOf(workload.object) === namespace &&
            Object.entries(selector).every(([key, value]) => template.labels[key] === value),
        );
        if (!matched) {
          violations.push({
            subject: located,
            message: `selector ${JSON.stringify(selector)} matches no pod template in namespace ${namespace}: fix the selector or the workload's pod labels`,
          });
        }
      }
      return violations;
    },
  },
  {
    name: 'route-backend',
    scope: 'environment',
    reason: 'An HTTPRoute backend that names a missing Service or port makes the Gateway answer with 500/503 (ResolvedRefs False).',
    check(objects) {
      const services = providedServices(objects);
      const violations: Violation[] = [];
      for (const located of ofKind(objects, 'HTTPRoute')) {
        for (const backend of routeBackends(located.object)) {
          const ports = services.get(`${backend.namespace}/${backend.name}`);
          if (ports === undefined) {
            violations.push({
              subject: located,
              message: `backend Service ${JSON.stringify(backend.name)} is not rendered in namespace ${backend.namespace} (nor created by a Canary there): render it or fix the name`,
            });
          } else if (!ports.some((port) => port.port === backend.port)) {
            violations.push({
              subject: located,
              message: `backend Service ${JSON.stringify(backend.name)} has no port ${JSON.stringify(backend.port)} (it has ${ports.map((port) => port.port).join(', ') || 'none'}): fix the port`,
            });
          }
        }
      }
      return violations;
    },
  },
  {
    name: 'certificate-issuer',
    scope: 'environment',
    reason:
      "cert-manager's webhook admits a Certificate whose issuer does not exist, and its controller leaves the request Pending until one appears (cert-manager v1.21.2 pkg/controller/certificaterequests/sync.go): the certificate is never issued and Argo CD shows it Progressing without end.",
    check(objects) {
      const issuers = objects.filter(({ object }) => object.apiVersion === `${CERT_MANAGER_GROUP}/v1` && (object.kind === 'Issuer' || object.kind === 'ClusterIssuer'));
      const rendered = (kind: string, name: string, namespace: string) =>
        issuers.some(({ object }) => object.kind === kind && object.metadata?.name === name && (kind === 'ClusterIssuer' || namespaceOf(object) === namespace));
      const known = issuers.map(({ object }) => `${object.kind} ${object.kind === 'ClusterIssuer' ? '' : `${namespaceOf(object)}/`}${object.metadata?.name}`).sort();
      const violations: Violation[] = [];
      for (const located of objects.filter(({ object }) => object.apiVersion === `${CERT_MANAGER_GROUP}/v1` && object.kind === 'Certificate')) {
        const ref = (located.object.spec?.issuerRef ?? {}) as { name?: string; kind?: string; group?: string };
        // Another group's issuer (an external issuer) is that controller's to judge; no kind means Issuer (pkg/api/util/issuers.go).
        if ((ref.group || CERT_MANAGER_GROUP) !== CERT_MANAGER_GROUP || ref.name === undefined) continue;
        const kind = ref.kind || 'Issuer';
        const namespace = namespaceOf(located.object);
        if (rendered(kind, ref.name, namespace)) continue;
        violations.push({
          subject: located,
          message: `spec.issuerRef names the ${kind} ${JSON.stringify(ref.name)}${kind === 'ClusterIssuer' ? '' : ` in namespace ${namespace}`}, which the environment does not render (it renders ${known.join(', ') || 'no issuer'}): fix spec.issuerRef.kind or spec.issuerRef.name`,
        });
      }
      return violations;
    },
  },
  {
    name: 'network-policy',
    scope: 'environment',
    reason:
      'Without a default-deny policy every pod accepts traffic from, and sends it to, anywhere in the cluster; the allows then say exactly which traffic a namespace needs.',
    check(objects) {
      const violations: Violation[] = [];
      const byNamespace = new Map<string, LocatedObject>();
      for (const { located } of workloadsOf(objects)) {
        const namespace = namespaceOf(located.object);
        if (!byNamespace.has(namespace)) byNamespace.set(namespace, located);
      }
      for (const [namespace, firstWorkload] of byNamespace) {
        const subject =
          ofKind(objects, 'Namespace').find((located) => located.object.metadata?.name === namespace) ?? firstWorkload;
        const policies = ofKind(objects, 'NetworkPolicy').filter((located) => namespaceOf(located.object) === namespace);
        if (!policies.some((located) => isDefaultDeny(located.object))) {
          violations.push({
            subject,
            message: `namespace ${namespace} runs workloads but has no default-deny NetworkPolicy: add one with podSelector {}, policyTypes [Ingress, Egress] and no rules`,
          });
        }
        if (!policies.some(({ object }) => nonEmptyList(object.spec?.ingress) || nonEmptyList(object.spec?.egress))) {
          violations.push({
            subject,
            message: `namespace ${namespace} has no NetworkPolicy that allows traffic: add the allows its pods need`,
          });
        }
      }
      return violations;
    },
  },
  {
    name: 'no-plaintext-secret',
    scope: 'object',
    reason: 'A Secret with data in the repository is a credential in git history forever; secrets come SOPS-encrypted and are referenced by name.',
    check(objects) {
      return ofKind(objects, 'Secret')
        .filter(({ object }) => Object.keys(object.data ?? {}).length > 0 || Object.keys(object.stringData ?? {}).length > 0)
        .map((subject) => ({
          subject,
          message: 'holds data or stringData in plain text: remove the Secret from the rendered output and provide it SOPS-encrypted, referenced by name',
        }));
    },
  },
  {
    name: 'pull-secret',
    scope: 'environment',
    reason: 'Pods pulling from the private registry without credentials fail with ImagePullBackOff (7: image pull failing).',
    check(objects, context) {
      if (context === undefined) return [];
      const accountsWithSecrets = new Set(
        ofKind(objects, 'ServiceAccount')
          .filter(({ object }) => nonEmptyList(object.imagePullSecrets))
          .map(({ object }) => `${namespaceOf(object)}/${object.metadata?.name}`),
      );
      const violations: Violation[] = [];
      for (const { located, template } of workloadsOf(objects)) {
        const registries = [...new Set(context.applications.map((app) => app.registry))];
        const privateImages = imagesOf(template.spec).filter((image) => registries.some((registry) => image.startsWith(`${registry}/`)));
        if (privateImages.length === 0 || nonEmptyList(template.spec.imagePullSecrets)) continue;
        const account = `${namespaceOf(located.object)}/${template.spec.serviceAccountName ?? 'default'}`;
        if (accountsWithSecrets.has(account)) continue;
        violations.push({
          subject: located,
          message: `pulls ${privateImages.join(', ')} from the private registry ${registries.find((registry) => privateImages[0]!.startsWith(`${registry}/`))} without imagePullSecrets: add the registry pull secret to the pod spec (or its ServiceAccount)`,
        });
      }
      return violations;
    },
  },
];

/** The names a rule can be exempted by. */
export const RULE_NAMES: readonly string[] = RULES.map((rule) => rule.name);

/** A rule the gate reports that no annotation can exempt: malformed exemptions. */
export const EXEMPTION_RULE = 'exemption';

/** An exemption annotation in force. */
export interface DeclaredExemption {
  readonly subject: LocatedObject;
  readonly rule: string;
  readonly reason: string;
}

/**
 * The exemption annotations of the objects: valid ones, and what is wrong with the rest
 * (an unknown rule, an empty reason), reported under the rule `exemption`.
 */
export function readExemptions(objects: readonly LocatedObject[]): { exemptions: DeclaredExemption[]; problems: Violation[] } {
  const exemptions: DeclaredExemption[] = [];
  const problems: Violation[] = [];
  for (const subject of objects) {
    for (const [key, value] of Object.entries(subject.object.metadata?.annotations ?? {})) {
      if (!key.startsWith(POLICY_EXEMPTION_PREFIX)) continue;
      const rule = key.slice(POLICY_EXEMPTION_PREFIX.length);
      if (!RULE_NAMES.includes(rule)) {
        problems.push({ subject, message: `annotation ${key} names no rule: use one of ${RULE_NAMES.join(', ')}` });
      } else if (typeof value !== 'string' || value.trim() === '') {
        problems.push({ subject, message: `annotation ${key} has an empty reason: say why the object needs the exemption` });
      } else {
        exemptions.push({ subject, rule, reason: value.trim() });
      }
    }
  }
  return { exemptions, problems };
}
