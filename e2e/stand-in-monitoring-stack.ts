/**
 * The part of kube-prometheus-stack that prometheus-operator reconciles, as a Helm template of
 * the stand-in chart (e2e/stand-in-charts.ts), rendered by Argo CD from the values the platform
 * gives the release, as the real chart renders it: the Prometheus and the Alertmanager, and
 * the Alertmanager's base configuration Secret, which the operator merges the platform's
 * AlertmanagerConfig into. Read in prometheus-community/helm-charts at kube-prometheus-stack
 * 88.5.3 (cf408a290aec), the version the platform pins (src/infrastructure/releases.ts):
 * - names: `<fullname>-prometheus`, `<fullname>-alertmanager` (`kube-prometheus-stack.fullname`
 *   is `fullnameOverride` when set); the Secret `alertmanager-<fullname>-alertmanager`
 *   (templates/alertmanager/secret.yaml) with `alertmanager.yaml`, the values' `alertmanager.config`;
 * - templates/prometheus/prometheus.yaml: the rule, ServiceMonitor and PodMonitor selectors
 *   (`{}` when `*SelectorNilUsesHelmValues` is false, else `release: <release>`; their namespace
 *   selectors `{}`), `retention`, the alerting endpoint (the Alertmanager's `http-web` port,
 *   path `/`, API v2), `portName: http-web`, one replica;
 * - templates/alertmanager/alertmanager.yaml: `replicas`, the three `alertmanagerConfig*` fields,
 *   `portName: http-web`;
 * - both: `version`, the values' `version` else their image's tag (values.yaml: Prometheus
 *   v3.14.0-distroless, Alertmanager v0.34.0), the release the operator generates each
 *   configuration for (without it, its own defaults: v3.13.1 and v0.33.1 at v0.93.1,
 *   pkg/operator/defaults.go);
 * - values.yaml: the pods' security context (user 1000, group 2000, RuntimeDefault seccomp) and
 *   the default `alertmanager.config` below, used when the values give none.
 * Everything else the real chart renders (exporters, dashboards, its own rules and monitors,
 * Services, the operator's Deployment and webhook) is not part of the stand-in.
 */
export const MONITORING_STACK_TEMPLATE = `{{- $fullname := .Values.fullnameOverride | default .Release.Name }}
{{- $prometheus := (.Values.prometheus | default dict).prometheusSpec | default dict }}
{{- $alertmanager := (.Values.alertmanager | default dict).alertmanagerSpec | default dict }}
{{- $prometheusVersion := $prometheus.version | default (($prometheus.image | default dict).tag | default "v3.14.0-distroless") }}
{{- $alertmanagerVersion := $alertmanager.version | default (($alertmanager.image | default dict).tag | default "v0.34.0") }}
{{- $security := dict "runAsGroup" 2000 "runAsNonRoot" true "runAsUser" 1000 "fsGroup" 2000 "seccompProfile" (dict "type" "RuntimeDefault") }}
{{- $defaultConfig := dict
  "global" (dict "resolve_timeout" "5m")
  "inhibit_rules" (list
    (dict "source_matchers" (list "severity = critical") "target_matchers" (list "severity =~ warning|info") "equal" (list "namespace" "alertname"))
    (dict "source_matchers" (list "severity = warning") "target_matchers" (list "severity = info") "equal" (list "namespace" "alertname"))
    (dict "source_matchers" (list "alertname = InfoInhibitor") "target_matchers" (list "severity = info") "equal" (list "namespace"))
    (dict "target_matchers" (list "alertname = InfoInhibitor")))
  "route" (dict "group_by" (list "namespace") "group_wait" "30s" "group_interval" "5m" "repeat_interval" "12h" "receiver" "null"
    "routes" (list (dict "receiver" "null" "matchers" (list "alertname = \\"Watchdog\\""))))
  "receivers" (list (dict "name" "null"))
  "templates" (list "/etc/alertmanager/config/*.tmpl") }}
{{- define "stand-in.workload" }}
apiVersion: monitoring.coreos.com/v1
kind: {{ .kind }}
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  version: {{ .version | quote }}
  replicas: {{ .replicas }}
  portName: http-web
{{- end }}
{{- include "stand-in.workload" (dict "kind" "Prometheus" "name" (printf "%s-prometheus" $fullname) "namespace" .Release.Namespace "replicas" 1 "version" $prometheusVersion) }}
  {{- with $prometheus.retention }}
  retention: {{ . | quote }}
  {{- end }}
  {{- range $kind := list "rule" "serviceMonitor" "podMonitor" }}
  {{- if eq (toString (index $prometheus (printf "%sSelectorNilUsesHelmValues" $kind))) "false" }}
  {{ $kind }}Selector: {}
  {{- else }}
  {{ $kind }}Selector:
    matchLabels:
      release: {{ $.Release.Name | quote }}
  {{- end }}
  {{ $kind }}NamespaceSelector: {}
  {{- end }}
  alerting:
    alertmanagers:
      - namespace: {{ .Release.Namespace }}
        name: {{ $fullname }}-alertmanager
        port: http-web
        pathPrefix: /
        apiVersion: v2
  securityContext:
{{ toYaml $security | indent 4 }}
---
{{- include "stand-in.workload" (dict "kind" "Alertmanager" "name" (printf "%s-alertmanager" $fullname) "namespace" .Release.Namespace "replicas" ($alertmanager.replicas | default 1) "version" $alertmanagerVersion) }}
  {{- range $field := list "alertmanagerConfigSelector" "alertmanagerConfigNamespaceSelector" "alertmanagerConfigMatcherStrategy" }}
  {{- with index $alertmanager $field }}
  {{ $field }}:
{{ toYaml . | indent 4 }}
  {{- end }}
  {{- end }}
  securityContext:
{{ toYaml $security | indent 4 }}
---
apiVersion: v1
kind: Secret
metadata:
  name: alertmanager-{{ $fullname }}-alertmanager
  namespace: {{ .Release.Namespace }}
data:
  alertmanager.yaml: {{ toYaml ((.Values.alertmanager | default dict).config | default $defaultConfig) | b64enc | quote }}
`;
