import * as kplus from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { BLUE_GREEN } from '../../contract/contract';
import { ApplicationWorkload, type EnvironmentValue } from '../../constructs/application-workload';
import type { Resources } from '../../environments';
import { imageReference, unitName } from '../../contract/naming';
import type { BlueGreenUnit } from '../../environments/strategy-blue-green';

export interface BlueGreenProps {
  /** Application name; units are `<application>-blue` and `<application>-green`. */
  readonly application: string;
  /** Namespace of the units. */
  readonly namespace: string;
  /** Registry host of the application image. */
  readonly registry: string;
  /** Project path inside the registry. */
  readonly project: string;
  /** The units to render, each with its image tag; at least the active one. */
  readonly units: Readonly<Partial<Record<BlueGreenUnit, { readonly tag: string }>>>;
  /** The unit the Service selects. */
  readonly active: BlueGreenUnit;
  /** Requests and limits of each unit's container. */
  readonly resources: Resources;
  /** Registry pull secret in the namespace. */
  readonly imagePullSecret: string;
  /** Identity of the pods. */
  readonly serviceAccount: kplus.IServiceAccount;
  /**
   * Plain configuration handed to every unit.
   * @default - none
   */
  readonly environment?: Readonly<Record<string, EnvironmentValue>>;
}

/**
 * Blue-green (1.4): full deployment units side by side, `<application>-<unit>`, labelled
 * `version=<unit>`, BLUE_GREEN.replicasPerUnit pods each. Traffic follows the Service
 * selector, which the chart sets from `active`.
 */
export class BlueGreen extends Construct {
  /** The rendered units, by name, in the order blue, green. */
  public readonly units: ReadonlyMap<BlueGreenUnit, ApplicationWorkload>;
  /** The unit the Service selects. */
  public readonly active: ApplicationWorkload;

  constructor(scope: Construct, id: string, props: BlueGreenProps) {
    super(scope, id);
    const units = new Map<BlueGreenUnit, ApplicationWorkload>();
    for (const unit of BLUE_GREEN.units) {
      const settings = props.units[unit];
      if (settings === undefined) continue;
      units.set(
        unit,
        new ApplicationWorkload(this, unit, {
          name: unitName(props.application, unit),
          namespace: props.namespace,
          application: props.application,
          version: unit,
          selectVersion: true,
          image: imageReference(props.registry, props.project, props.application, settings.tag),
          replicas: BLUE_GREEN.replicasPerUnit,
          resources: props.resources,
          imagePullSecret: props.imagePullSecret,
          serviceAccount: props.serviceAccount,
          environment: props.environment,
        }),
      );
    }
    this.units = units;
    this.active = units.get(props.active)!;
  }
}
