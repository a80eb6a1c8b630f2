import type { Construct } from 'constructs';
import { SINGLE_UNIT_VERSION } from '../contract/choices';
import { ApplicationWorkload } from '../constructs/application-workload';
import { imageReference } from '../contract/naming';
import type { StrategyWorkloadProps } from './delivery-strategy';

/**
 * The one Deployment of rolling and canary: named after the application, at `image.tag`,
 * `replicas` pods (both validated present for these strategies).
 */
export function singleUnitWorkload(
  scope: Construct,
  { application, serviceAccount, environment }: StrategyWorkloadProps,
  disruptionBudgetLabels?: Readonly<Record<string, string>>,
): ApplicationWorkload {
  const { image } = application;
  return new ApplicationWorkload(scope, 'workload', {
    name: application.name,
    namespace: application.namespace,
    application: application.name,
    version: SINGLE_UNIT_VERSION,
    image: imageReference(image.registry, image.project, application.name, image.tag!),
    replicas: application.replicas!,
    resources: application.resources,
    imagePullSecret: image.pullSecret,
    serviceAccount,
    environment,
    ...(disruptionBudgetLabels === undefined ? {} : { disruptionBudgetLabels }),
  });
}
