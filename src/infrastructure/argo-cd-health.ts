import { OPERATOR_SYNC_ANNOTATION } from '../contract/choices';
import { WAITS_SECONDS } from '../contract/contract';

// The health checks the platform adds to Argo CD (argocd-cm `resource.customizations.*`), as
// Lua that Argo CD's controller runs on every comparison and between a sync's waves: a
// resource Degraded there fails the sync (argo-cd v3.6.1 gitops-engine
// pkg/sync/sync_context.go), and Argo CD's notifications announce it.

/**
 * Argo CD's health of a child Application, for the app of apps: Argo CD stopped
 * assessing Applications by default (1.8), so a parent would move past a sync wave
 * before its children are ready. Healthy only when the child is synced, not mid-sync,
 * and healthy itself; otherwise the child's own status. A child only an operator syncs
 * (OPERATOR_SYNC_ANNOTATION: Argo CD's own release) counts by its health alone: it is
 * OutOfSync whenever git is ahead of the last reviewed sync, and later waves must not wait
 * for that.
 */
export const APPLICATION_HEALTH_LUA = [
  'local hs = { status = "Progressing", message = "waiting for the application to report health" }',
  'local st = obj.status',
  'if st == nil or st.health == nil or st.health.status == nil then return hs end',
  `if obj.metadata.annotations ~= nil and obj.metadata.annotations["${OPERATOR_SYNC_ANNOTATION.key}"] == "${OPERATOR_SYNC_ANNOTATION.value}" then`,
  '  hs.status = st.health.status',
  '  local sync = "Unknown"',
  '  if st.sync ~= nil and st.sync.status ~= nil then sync = st.sync.status end',
  '  hs.message = "synced by an operator after review; sync status " .. sync',
  '  return hs',
  'end',
  'if st.operationState ~= nil and st.operationState.phase == "Running" then',
  '  hs.message = "sync operation running"',
  '  return hs',
  'end',
  'if st.health.status == "Healthy" and (st.sync == nil or st.sync.status ~= "Synced") then',
  '  hs.message = "healthy but not synced yet"',
  '  return hs',
  'end',
  'hs.status = st.health.status',
  'if st.health.message ~= nil then hs.message = st.health.message else hs.message = "" end',
  'return hs',
  '',
].join('\n');

/**
 * A Lua function, `secondsSince(timestamp)`: the seconds since a Kubernetes timestamp
 * (`2026-11-27T19:00:00Z`), or nil when it is not one. It reads the time with Lua's string
 * library and Argo CD's safe `os` (`os.time`, `os.date`), so a check that uses it runs with
 * the standard libraries, as Argo CD runs its built-in checks
 * (`resource.customizations.useOpenLibs`). Both times are read as local time, so their
 * difference holds in any time zone.
 */
const SECONDS_SINCE_LUA = [
  'local function secondsSince(timestamp)',
  '  if type(timestamp) ~= "string" then return nil end',
  '  local y, mo, d, h, mi, s = string.match(timestamp, "^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")',
  '  if y == nil then return nil end',
  '  local at = os.time({ year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi), sec = tonumber(s) })',
  '  return os.time(os.date("!*t")) - at',
  'end',
].join('\n');

/**
 * How long a prometheus-operator Prometheus or Alertmanager may have no ready pod before it
 * counts as Degraded: the contract's wait for an infrastructure component's pods (1.3.4).
 */
export const MONITORING_STARTUP_GRACE_SECONDS = WAITS_SECONDS.infrastructurePodsReady;

/**
 * Argo CD's health of a prometheus-operator Prometheus or Alertmanager (the kube-prometheus-stack
 * release's), from its `Available` condition:
 * - True: Healthy; `SomePodsNotReady`: Progressing (both as Argo CD's built-in check,
 *   resource_customizations/monitoring.coreos.com/{Prometheus,Alertmanager}/health.lua).
 * - `NoPodReady` or `StatefulSetNotFound` (prometheus-operator v0.93.1
 *   pkg/operator/statefulset_reporter.go: what a new one reports until its first pod is
 *   ready): Progressing for MONITORING_STARTUP_GRACE_SECONDS after the condition's
 *   `lastTransitionTime` (the operator keeps it while the status holds,
 *   pkg/operator/conditions.go), Degraded after. The built-in check reads them as Degraded at
 *   once, so a first install's sync fails, its retry waits, and the team chat is told a
 *   deployment FAILED that is only starting; a StatefulSet is Progressing by Argo CD's own
 *   check while its pods start.
 * - any other reason, or a condition without a readable time: Degraded.
 * The message names the condition's time, not a count of seconds, so it stays the same from
 * one comparison to the next and Argo CD writes no new status for it. The time is read by
 * SECONDS_SINCE_LUA.
 */
export const MONITORING_WORKLOAD_HEALTH_LUA = [
  'local hs = { status = "Progressing", message = "Waiting for initialization" }',
  'if obj.status == nil or obj.status.conditions == nil then return hs end',
  SECONDS_SINCE_LUA,
  'for _, condition in ipairs(obj.status.conditions) do',
  '  if condition.type == "Available" then',
  '    if condition.status == "True" then',
  '      hs.status = "Healthy"',
  '      hs.message = "All instances are available"',
  '    else',
  '      local reason = condition.reason or ""',
  '      local detail = reason',
  '      if condition.message ~= nil and condition.message ~= "" then detail = condition.message end',
  '      hs.message = detail',
  '      if reason == "SomePodsNotReady" then',
  '        hs.status = "Progressing"',
  '      elseif reason == "NoPodReady" or reason == "StatefulSetNotFound" then',
  '        local since = secondsSince(condition.lastTransitionTime)',
  `        if since ~= nil and since < ${MONITORING_STARTUP_GRACE_SECONDS} then`,
  '          hs.status = "Progressing"',
  `          hs.message = reason .. " since " .. condition.lastTransitionTime .. " (Degraded ${MONITORING_STARTUP_GRACE_SECONDS} s after): " .. detail`,
  '        else',
  '          hs.status = "Degraded"',
  `          hs.message = reason .. " for over ${MONITORING_STARTUP_GRACE_SECONDS} s: " .. detail`,
  '        end',
  '      else',
  '        hs.status = "Degraded"',
  '      end',
  '    end',
  '  end',
  'end',
  'return hs',
  '',
].join('\n');

/** The prometheus-operator kinds MONITORING_WORKLOAD_HEALTH_LUA assesses, as argocd-cm keys name them (`<group>_<kind>`). */
export const MONITORING_WORKLOAD_KINDS = ['monitoring.coreos.com_Prometheus', 'monitoring.coreos.com_Alertmanager'] as const;

/**
 * How long a cert-manager Certificate may be not Ready before cert-manager starts issuing it
 * and still count as Progressing. The contract shows no such wait; the platform takes its
 * wait for the certificate manager's pods (1.3.4), which is far longer than the moment
 * cert-manager's trigger controller needs, so only a Certificate nothing issues turns
 * Degraded.
 */
export const CERTIFICATE_ISSUANCE_GRACE_SECONDS = WAITS_SECONDS.infrastructurePodsReady;

/**
 * Argo CD's health of a cert-manager Certificate, as Argo CD's built-in check
 * (resource_customizations/cert-manager.io/Certificate/health.lua: `Issuing` True is
 * Progressing; `Ready` True Healthy, False Degraded; no verdict yet Progressing) but for one
 * state: `Ready` False with no `Issuing` condition at all.
 * cert-manager v1.21.2 writes that first for every new Certificate: its readiness controller
 * finds no Secret (`DoesNotExist`, pkg/controller/certificates/readiness) before its trigger
 * controller sets `Issuing` True (pkg/controller/certificates/trigger). The built-in check
 * reads that moment as Degraded, so a first install's sync fails, its retry waits, and the team
 * chat is told the issuers FAILED while cert-manager is starting to issue. It is Progressing
 * here for CERTIFICATE_ISSUANCE_GRACE_SECONDS after `Ready`'s `lastTransitionTime`, Degraded
 * after. A failed issuance always leaves `Issuing` False with the request's reason
 * (pkg/controller/certificates/issuing `failIssueCertificate`), so it stays Degraded at once.
 */
export const CERTIFICATE_HEALTH_LUA = [
  'local hs = { status = "Progressing", message = "Waiting for certificate" }',
  'if obj.status == nil or obj.status.conditions == nil then return hs end',
  SECONDS_SINCE_LUA,
  'local issuing = nil',
  'for _, condition in ipairs(obj.status.conditions) do',
  '  if condition.type == "Issuing" then issuing = condition end',
  'end',
  'if issuing ~= nil and issuing.status == "True" then',
  '  hs.message = issuing.message',
  '  return hs',
  'end',
  'for _, condition in ipairs(obj.status.conditions) do',
  '  if condition.type == "Ready" and condition.status == "True" then',
  '    hs.status = "Healthy"',
  '    hs.message = condition.message',
  '    return hs',
  '  end',
  '  if condition.type == "Ready" and condition.status == "False" then',
  '    local detail = condition.message or ""',
  '    hs.status = "Degraded"',
  '    hs.message = detail',
  '    if issuing == nil then',
  '      local since = secondsSince(condition.lastTransitionTime)',
  `      if since ~= nil and since < ${CERTIFICATE_ISSUANCE_GRACE_SECONDS} then`,
  '        hs.status = "Progressing"',
  `        hs.message = "not issued yet, since " .. condition.lastTransitionTime .. " (Degraded ${CERTIFICATE_ISSUANCE_GRACE_SECONDS} s after): " .. detail`,
  '      else',
  `        hs.message = "not issued for over ${CERTIFICATE_ISSUANCE_GRACE_SECONDS} s: " .. detail`,
  '      end',
  '    end',
  '    return hs',
  '  end',
  'end',
  'return hs',
  '',
].join('\n');

/** The argocd-cm key of CERTIFICATE_HEALTH_LUA's kind (`<group>_<kind>`). */
export const CERTIFICATE_KIND = 'cert-manager.io_Certificate';

/**
 * Argo CD's health of a Gateway API Gateway, by the rules of Argo CD's built-in check
 * (resource_customizations/gateway.networking.k8s.io/Gateway/health.lua: a Gateway condition
 * `ResolvedRefs` or `Accepted` False is Degraded, `Programmed` not True Progressing; then the
 * same for each listener; Healthy once it reports), but for one state: a listener whose
 * certificate's Secret does not exist yet.
 * An application's Gateway and its Certificate are synced together, and cert-manager creates
 * the Secret only when it has issued the certificate (seconds from the local CA, longer over
 * ACME, whose HTTP-01 challenge is answered through that same Gateway). Until then Envoy
 * Gateway v1.9.1 reports the listener `ResolvedRefs` False, `InvalidCertificateRef`, "Secret
 * <namespace>/<name> does not exist." (internal/gatewayapi/validate.go), which the built-in
 * check reads as Degraded: the application's first sync fails, its retry waits, and the team
 * chat is told the deployment is Degraded. That listener is Progressing here for
 * CERTIFICATE_ISSUANCE_GRACE_SECONDS after the condition's `lastTransitionTime`, Degraded
 * after; any other refused reference (another namespace's Secret without a ReferenceGrant, a
 * Secret that is not a certificate) stays Degraded at once.
 */
export const GATEWAY_HEALTH_LUA = [
  'local hs = { status = "Progressing", message = "Waiting for Gateway status" }',
  'if obj.status == nil then return hs end',
  SECONDS_SINCE_LUA,
  'local function falseCondition(conditions, kind)',
  '  for _, condition in ipairs(conditions) do',
  '    if condition.type == kind and condition.status == "False" then return condition end',
  '  end',
  '  return nil',
  'end',
  'local function notProgrammed(conditions)',
  '  for _, condition in ipairs(conditions) do',
  '    if condition.type == "Programmed" and condition.status ~= "True" then return condition end',
  '  end',
  '  return nil',
  'end',
  'local conditions = obj.status.conditions',
  'if conditions ~= nil then',
  '  for _, kind in ipairs({ "ResolvedRefs", "Accepted" }) do',
  '    local failed = falseCondition(conditions, kind)',
  '    if failed ~= nil then',
  '      hs.status = "Degraded"',
  '      hs.message = failed.message or ("Failed condition: " .. kind)',
  '      return hs',
  '    end',
  '  end',
  '  local pending = notProgrammed(conditions)',
  '  if pending ~= nil then',
  '    hs.message = pending.message or "Gateway is still being programmed"',
  '    return hs',
  '  end',
  'end',
  'local listeners = obj.status.listeners or {}',
  'for _, listener in ipairs(listeners) do',
  '  if listener.conditions ~= nil then',
  '    local refs = falseCondition(listener.conditions, "ResolvedRefs")',
  '    if refs ~= nil then',
  '      local detail = refs.message or "Failed condition: ResolvedRefs"',
  '      if refs.reason == "InvalidCertificateRef" and string.find(detail, "does not exist", 1, true) ~= nil then',
  '        local since = secondsSince(refs.lastTransitionTime)',
  `        if since ~= nil and since < ${CERTIFICATE_ISSUANCE_GRACE_SECONDS} then`,
  `          hs.message = "Listener " .. (listener.name or "") .. ": certificate not issued yet, since " .. refs.lastTransitionTime .. " (Degraded ${CERTIFICATE_ISSUANCE_GRACE_SECONDS} s after): " .. detail`,
  '          return hs',
  '        end',
  '      end',
  '      hs.status = "Degraded"',
  '      hs.message = "Listener: " .. detail',
  '      return hs',
  '    end',
  '    local accepted = falseCondition(listener.conditions, "Accepted")',
  '    if accepted ~= nil then',
  '      hs.status = "Degraded"',
  '      hs.message = "Listener: " .. (accepted.message or "Failed condition: Accepted")',
  '      return hs',
  '    end',
  '    local pending = notProgrammed(listener.conditions)',
  '    if pending ~= nil then',
  '      hs.message = "Listener: " .. (pending.message or "Listener is still being programmed")',
  '      return hs',
  '    end',
  '  end',
  'end',
  'if conditions ~= nil or #listeners > 0 then',
  '  hs.status = "Healthy"',
  '  hs.message = "Gateway is healthy"',
  'end',
  'return hs',
  '',
].join('\n');

/** The argocd-cm key of GATEWAY_HEALTH_LUA's kind (`<group>_<kind>`). */
export const GATEWAY_KIND = 'gateway.networking.k8s.io_Gateway';

/** The argocd-cm entries of every health check above (argocd-cm, through the kustomization's patch), in a stable order. */
export function healthCustomizations(): Record<string, string> {
  return {
    'resource.customizations.health.argoproj.io_Application': APPLICATION_HEALTH_LUA,
    ...Object.fromEntries(
      MONITORING_WORKLOAD_KINDS.flatMap((kind) => [
        [`resource.customizations.health.${kind}`, MONITORING_WORKLOAD_HEALTH_LUA],
        [`resource.customizations.useOpenLibs.${kind}`, 'true'],
      ]),
    ),
    [`resource.customizations.health.${CERTIFICATE_KIND}`]: CERTIFICATE_HEALTH_LUA,
    [`resource.customizations.useOpenLibs.${CERTIFICATE_KIND}`]: 'true',
    [`resource.customizations.health.${GATEWAY_KIND}`]: GATEWAY_HEALTH_LUA,
    [`resource.customizations.useOpenLibs.${GATEWAY_KIND}`]: 'true',
  };
}
