import type { ClusterConnection } from '../cluster/connection';

/** The Gateway API version the platform renders (Gateway API v1.6.1: Gateway and HTTPRoute are GA in v1). */
const GATEWAY_API_VERSION = 'gateway.networking.k8s.io/v1';

/**
 * 4.2 "ingress listed and described", on Gateway API: the application's Gateway and its
 * HTTPRoutes, read through the Kubernetes API, judged by their status conditions. Gateway API's own
 * conditions say what a 503 would not: a Gateway is `Accepted` by its controller and
 * `Programmed` into the proxies; a route is `Accepted` by each parent (listener) and its
 * backends resolve (`ResolvedRefs`).
 */
export const GATEWAY_CONDITIONS = ['Accepted', 'Programmed'] as const;
export const ROUTE_CONDITIONS = ['Accepted', 'ResolvedRefs'] as const;

interface Condition {
  readonly type?: string;
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
}

/** The parts of a Gateway or HTTPRoute the check reads. */
export interface GatewayApiObject {
  readonly metadata?: { readonly name?: string };
  readonly status?: {
    readonly conditions?: readonly Condition[];
    readonly parents?: readonly { readonly parentRef?: { readonly name?: string; readonly sectionName?: string }; readonly conditions?: readonly Condition[] }[];
  };
}

/** What the check found: one line per object (or route parent), and the problems. */
export interface GatewayReport {
  readonly lines: readonly string[];
  readonly problems: readonly string[];
}

function judge(label: string, conditions: readonly Condition[] | undefined, wanted: readonly string[], lines: string[], problems: string[]): void {
  const states = wanted.map((type) => {
    const condition = (conditions ?? []).find((c) => c.type === type);
    if (condition?.status !== 'True') {
      const why = condition === undefined ? 'not reported' : `${condition.status} (${condition.reason ?? 'no reason'}${condition.message ? `: ${condition.message}` : ''})`;
      problems.push(`${label}: ${type} is ${why}`);
    }
    return `${type}=${condition?.status ?? 'missing'}`;
  });
  lines.push(`${label} ${states.join(' ')}`);
}

/** Judge the Gateway and the routes attached to it by their status conditions. */
export function gatewayReport(gateway: GatewayApiObject, routes: readonly GatewayApiObject[]): GatewayReport {
  const lines: string[] = [];
  const problems: string[] = [];
  const gatewayName = gateway.metadata?.name ?? '(unnamed)';
  judge(`Gateway ${gatewayName}`, gateway.status?.conditions, GATEWAY_CONDITIONS, lines, problems);
  const attached = routes.filter((route) => (route.status?.parents ?? []).some((parent) => parent.parentRef?.name === gatewayName));
  if (attached.length === 0) problems.push(`no HTTPRoute reports Gateway ${gatewayName} as its parent`);
  for (const route of attached) {
    for (const parent of route.status?.parents ?? []) {
      if (parent.parentRef?.name !== gatewayName) continue;
      const section = parent.parentRef.sectionName === undefined ? '' : `/${parent.parentRef.sectionName}`;
      judge(`HTTPRoute ${route.metadata?.name ?? '(unnamed)'} on ${gatewayName}${section}`, parent.conditions, ROUTE_CONDITIONS, lines, problems);
    }
  }
  return { lines, problems };
}

/** Read the Gateway and the namespace's HTTPRoutes through the Kubernetes API, then judge them; rejects listing every problem. */
export async function checkGateway(cluster: ClusterConnection, namespace: string, gateway: string): Promise<string> {
  const object = await cluster.get(GATEWAY_API_VERSION, 'Gateway', gateway, namespace);
  if (object === undefined) throw new Error(`Gateway ${namespace}/${gateway} does not exist`);
  const routes = await cluster.list(GATEWAY_API_VERSION, 'HTTPRoute', namespace);
  const report = gatewayReport(object as GatewayApiObject, routes as GatewayApiObject[]);
  if (report.problems.length > 0) throw new Error(report.problems.join('; '));
  return report.lines.join('; ');
}
