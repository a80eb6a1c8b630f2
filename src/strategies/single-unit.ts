import type * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { SINGLE_UNIT_VERSION } from '../contract/choices';
import { ApplicationWorkload } from '../constructs/application-workload';
import { imageReference } from '../contract/naming';
import type { Application } from '../environments';
import type { StrategyWorkloadProps } from './delivery-strategy';
import type { OneDeploymentFields } from '../environments/strategy-values';

export interface SingleUnitOptions {
  /**
   * Labels of the pods the Deployment's PodDisruptionBudget protects.
   * @default - the Deployment's own pods
   */
  readonly disruptionBudgetLabels?: Readonly<Record<string, string>>;
  /**
   * How the Deployment replaces its pods.
   * @default - a rolling update, maxUnavailable 1 and maxSurge 1 (8)
   */
  readonly strategy?: kplus.DeploymentStrategy;
}

/**
 * The one Deployment of a strategy that runs one (rolling, canary): named after the
 * application, at `image.tag`, `replicas` pods.
 */
export function singleUnitWorkload(
  scope: Construct,
  { application, serviceAccount, environment }: StrategyWorkloadProps<Application & OneDeploymentFields>,
  options: SingleUnitOptions = {},
): ApplicationWorkload {
  const { image } = application;
  return new ApplicationWorkload(scope, 'workload', {
    name: application.name,
    namespace: application.namespace,
    application: application.name,
    version: SINGLE_UNIT_VERSION,
    image: imageReference(image.registry, image.project, application.name, image.tag),
    replicas: application.replicas,
    resources: application.resources,
    imagePullSecret: image.pullSecret,
    serviceAccount,
    environment,
    ...options,
  });
}
