import { ApiObject, App } from 'cdk8s';
import type { OperationsScope } from '../cluster/operations-role';
import { ROOT_APPLICATION } from '../contract/platform-charts';
import type { Environment } from '../environments';
import type { Platform } from '../environments/platform';
import { buildEnvironment } from './index';

/**
 * What the live operations' roles are made for in an environment, read off its rendering: the
 * Argo CD Applications it renders (the children of the GitOps wiring, the Helm releases of the
 * infrastructure chart) and the root, which the bootstrap creates; the applications', the
 * database's and the broker's namespaces.
 */
export function operationsScope(environment: Environment, platform: Platform): OperationsScope {
  const app = new App();
  buildEnvironment(app, environment, platform);
  const applications = app.charts
    .flatMap((chart) => chart.node.findAll())
    .filter(ApiObject.isApiObject)
    .filter((object) => object.kind === 'Application' && object.apiVersion.startsWith('argoproj.io/'))
    .map((object) => object.name);
  return {
    controllerNamespace: platform.controller.namespace,
    applications: [...new Set([ROOT_APPLICATION, ...applications])].sort(),
    applicationNamespaces: [...new Set(environment.applications.map((application) => application.namespace))].sort(),
    databaseNamespace: environment.database.namespace,
    brokerNamespace: environment.broker.namespace,
  };
}
