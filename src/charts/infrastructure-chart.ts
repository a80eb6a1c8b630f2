import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import type { ApplicationSpecIgnoreDifferences } from '../imports/application-argoproj.io';
import { ARGO_CD_RELEASE, argoCdValues } from '../argocd/argo-cd-values';
import { INFRASTRUCTURE_PROJECT } from '../argocd/applications';
import { HELM_CHARTS } from '../chart-versions';
import { INFRASTRUCTURE_NAMESPACES, SYNC_WAVES } from '../constants';
import { HelmReleaseApplication } from '../constructs/helm-release-application';
import type { Environment } from '../environments';
import type { Platform } from '../environments/platform';
import {
  RELEASES,
  certManagerValues,
  envoyGatewayValues,
  flaggerLoadTesterValues,
  gatewayApiCrdsValues,
  strimziOperatorValues,
  flaggerValues,
  kubePrometheusStackValues,
} from '../infrastructure/helm-values';

/**
 * Strimzi 1.2's `kafkas` CRD declares `status.clusterSecurity.properties: {}`, which the
 * API server drops when it stores the CRD (strimzi/strimzi-kafka-operator issue 13074):
 * compared with the chart, the CRD is OutOfSync for ever, the Application re-applies it on
 * every self-heal and its parent never finishes its wave (seen on the e2e cluster).
 */
export const STRIMZI_KAFKA_CRD_PRUNED_FIELD: ApplicationSpecIgnoreDifferences = {
  group: 'apiextensions.k8s.io',
  kind: 'CustomResourceDefinition',
  name: 'kafkas.kafka.strimzi.io',
  jqPathExpressions: ['.spec.versions[].schema.openAPIV3Schema.properties.status.properties.clusterSecurity.properties'],
};

export interface InfrastructureChartProps {
  /** The validated environment to render. */
  readonly environment: Environment;
  /** Platform-wide settings (Argo CD namespace and project). */
  readonly platform: Platform;
}

/**
 * The infrastructure of one environment (1.3.4, 1.3.7): an Argo CD Application per
 * upstream Helm release at its pinned chart version (src/chart-versions.ts), in sync
 * waves (the Gateway API CRDs, cert-manager, Envoy Gateway, Argo CD itself, then the
 * monitoring stack, Flagger and its load tester, the broker operator). Custom resources of
 * these charts live in later Applications (the issuers chart first), never here beside the
 * Application that installs their CRDs.
 */
export class InfrastructureChart extends Chart {
  /** The Helm releases, in the order they are synced. */
  public readonly releases: readonly HelmReleaseApplication[];

  constructor(scope: Construct, id: string, props: InfrastructureChartProps) {
    super(scope, id, { disableResourceNameHashes: true });
    const { environment, platform } = props;
    const common = {
      controllerNamespace: platform.controller.namespace,
      // The Helm releases create cluster-scoped RBAC, CRDs and webhooks: only this project allows them.
      project: INFRASTRUCTURE_PROJECT,
      automated: environment.autoSync,
    };

    this.releases = [
      // Before cert-manager, which looks for the Gateway API CRDs when it starts. The CRDs
      // (Envoy Gateway's EnvoyProxy is 1.4 MB) exceed a client-side apply's annotation.
      new HelmReleaseApplication(this, 'gateway-crds', {
        ...common,
        name: RELEASES.gatewayApiCrds,
        chart: HELM_CHARTS.gatewayApiCrds,
        namespace: INFRASTRUCTURE_NAMESPACES.ingressController,
        values: gatewayApiCrdsValues(),
        syncWave: SYNC_WAVES.gatewayApiCrds,
        syncOptions: ['ServerSideApply=true'],
      }),
      new HelmReleaseApplication(this, 'cert-manager', {
        ...common,
        name: RELEASES.certManager,
        chart: HELM_CHARTS.certManager,
        namespace: INFRASTRUCTURE_NAMESPACES.certificateManager,
        values: certManagerValues(),
        syncWave: SYNC_WAVES.certificateManager,
      }),
      new HelmReleaseApplication(this, 'envoy-gateway', {
        ...common,
        name: RELEASES.envoyGateway,
        chart: HELM_CHARTS.envoyGateway,
        namespace: INFRASTRUCTURE_NAMESPACES.ingressController,
        values: envoyGatewayValues(),
        syncWave: SYNC_WAVES.ingressController,
      }),
      // Self-managed: the Pulumi bootstrap installs the same chart, version and values once.
      new HelmReleaseApplication(this, 'argo-cd', {
        ...common,
        name: ARGO_CD_RELEASE,
        chart: HELM_CHARTS.argoCd,
        namespace: platform.controller.namespace,
        values: argoCdValues(),
        syncWave: SYNC_WAVES.controller,
      }),
      new HelmReleaseApplication(this, 'kube-prometheus-stack', {
        ...common,
        name: RELEASES.kubePrometheusStack,
        chart: HELM_CHARTS.kubePrometheusStack,
        namespace: INFRASTRUCTURE_NAMESPACES.monitoringStack,
        values: kubePrometheusStackValues(environment),
        syncWave: SYNC_WAVES.monitoringStack,
        // Its CRDs are larger than the last-applied annotation a client-side apply writes.
        syncOptions: ['ServerSideApply=true'],
      }),
      new HelmReleaseApplication(this, 'flagger', {
        ...common,
        name: RELEASES.flagger,
        chart: HELM_CHARTS.flagger,
        namespace: INFRASTRUCTURE_NAMESPACES.progressiveDelivery,
        values: flaggerValues(),
        syncWave: SYNC_WAVES.progressiveDelivery,
      }),
      new HelmReleaseApplication(this, 'flagger-loadtester', {
        ...common,
        name: RELEASES.flaggerLoadTester,
        chart: HELM_CHARTS.flaggerLoadTester,
        namespace: INFRASTRUCTURE_NAMESPACES.progressiveDelivery,
        values: flaggerLoadTesterValues(),
        syncWave: SYNC_WAVES.loadTester,
      }),
      // 1.3 step 6: the operator first (ready within 300 s), in the cluster's namespace,
      // which it watches; the broker chart's Kafka follows in a later child Application.
      new HelmReleaseApplication(this, 'strimzi-kafka-operator', {
        ...common,
        name: RELEASES.strimziOperator,
        chart: HELM_CHARTS.strimziOperator,
        namespace: environment.broker.namespace,
        values: strimziOperatorValues(),
        syncWave: SYNC_WAVES.brokerOperator,
        ignoreDifferences: [STRIMZI_KAFKA_CRD_PRUNED_FIELD],
      }),
    ];
  }
}
