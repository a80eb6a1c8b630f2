import type { DeliveryStrategy } from '../delivery-strategy';
import { throughService } from '../service-route';
import { blueGreenTransitionProblems, committedBlueGreen } from './steps';
import { BlueGreen } from './units';

/**
 * Blue-green (1.4, 2.1): every unit of `strategy.blueGreen.units` as a full Deployment
 * `<application>-<unit>` (BLUE_GREEN.replicasPerUnit pods, `version=<unit>`), and the
 * Service selecting the active unit. The steps between two states are judged by ./steps.ts
 * against the committed chart.
 */
export const blueGreen: DeliveryStrategy<'blue-green'> = {
  type: 'blue-green',
  workloads(scope, { application, labels, serviceAccount, environment }) {
    const { image, strategy } = application;
    const units = new BlueGreen(scope, 'blue-green', {
      application: application.name,
      namespace: application.namespace,
      registry: image.registry,
      project: image.project,
      units: strategy.blueGreen.units,
      active: strategy.blueGreen.active,
      resources: application.resources,
      imagePullSecret: image.pullSecret,
      serviceAccount,
      environment,
    });
    return { route: throughService(application, labels, units.active.podLabels) };
  },
  stepProblems(application, committed, label) {
    return blueGreenTransitionProblems(application, committed && committedBlueGreen(committed, application.name), label);
  },
};
