import { load } from 'js-yaml';
import { BLUE_GREEN, LABELS } from '../contract/contract';
import { BlueGreen } from '../constructs/blue-green';
import type { Application, Strategy } from '../environments';
import { sourceAt } from '../environments/values-file';
import { unitName } from '../contract/naming';
import type { DeliveryStrategy } from './delivery-strategy';
import { throughService } from './service-route';

type Unit = (typeof BLUE_GREEN.units)[number];
type BlueGreenStrategy = Extract<Strategy, { type: 'blue-green' }>;

/**
 * Blue-green (1.4, 2.1): every unit of `strategy.blueGreen.units` as a full Deployment
 * `<application>-<unit>` (BLUE_GREEN.replicasPerUnit pods, `version=<unit>`), and the
 * Service selecting the active unit. The steps between two states are judged by
 * `blueGreenTransitionProblems` below.
 */
export const blueGreen: DeliveryStrategy<BlueGreenStrategy> = {
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
};

/** What the committed manifests of a blue-green environment run: the live state under review. */
export interface CommittedBlueGreen {
  /** The unit the committed Service selects (`version=<unit>`). */
  readonly active: Unit;
  /** The committed units and the image tag each runs. */
  readonly tags: Partial<Record<Unit, string>>;
}

/**
 * The blue-green procedure (1.4) as three reviewed changes: (1) add the new unit beside the
 * active one, (2) move the Service selector to it once it is healthy, (3) remove the old
 * unit. Each change is judged against the committed manifests (what the cluster syncs; `file`
 * names them in messages; the values file and line of the field that made the step lead each
 * message), so a change may not skip a step: switching to a unit that is not running yet, removing the unit
 * that still takes the traffic, or changing the version of the unit that takes the traffic
 * (a rolling update in place, not a blue-green release) is refused.
 */
export function blueGreenTransitionProblems(
  application: Application,
  committed: CommittedBlueGreen | undefined,
  file: string,
): string[] {
  const { strategy } = application;
  if (strategy.type !== 'blue-green' || committed === undefined) return [];
  const { active, units } = strategy.blueGreen;
  const at = (field: readonly string[], message: string) => sourceAt(application.source, ['strategy', 'blueGreen', ...field], message);
  const problems: string[] = [];
  if (units[committed.active] === undefined) {
    problems.push(
      at(
        ['units', committed.active],
        `strategy.blueGreen.units.${committed.active} (removed) is the unit the committed Service still selects (${file}); ` +
          `move strategy.blueGreen.active to the other unit in its own change first, then remove it`,
      ),
    );
  }
  if (active !== committed.active && committed.tags[active] === undefined) {
    problems.push(
      at(
        ['active'],
        `strategy.blueGreen.active "${active}" is not running yet (${file} has no ${active} unit); ` +
          `add the unit in its own change, check its health, then switch`,
      ),
    );
  }
  const liveTag = committed.tags[committed.active];
  const newTag = units[committed.active]?.tag;
  if (active === committed.active && liveTag !== undefined && newTag !== undefined && newTag !== liveTag) {
    problems.push(
      at(
        ['units', committed.active, 'tag'],
        `strategy.blueGreen.units.${committed.active}.tag "${newTag}" changes the unit that takes the traffic (committed ${liveTag}); ` +
          `release the new version on the other unit, then switch`,
      ),
    );
  }
  return problems;
}

/**
 * The blue-green state an application's committed chart file renders, or undefined when the
 * application was not rendered as blue-green there (a first render, or a change of strategy).
 */
export function parseCommittedBlueGreen(text: string, app: Application): CommittedBlueGreen | undefined {
  // Parse only the Service and Deployment documents: the file holds many more. With js-yaml,
  // which is 6 ms faster here than `yaml` in a synth (measured); only a label and image
  // strings are read, which both libraries read alike.
  const objects = text
    .split(/^---$/m)
    .filter((document) => /^kind: (Service|Deployment)$/m.test(document))
    .map((document) => load(document) as any);
  const application = app.name;
  const service = objects.find((o) => o?.kind === 'Service' && o.metadata?.name === application);
  const active = service?.spec?.selector?.[LABELS.version];
  if (!(BLUE_GREEN.units as readonly string[]).includes(active)) return undefined;
  const tags: Partial<Record<Unit, string>> = {};
  for (const unit of BLUE_GREEN.units) {
    const deployment = objects.find((o) => o?.kind === 'Deployment' && o.metadata?.name === unitName(application, unit));
    const image: string | undefined = deployment?.spec?.template?.spec?.containers?.[0]?.image;
    if (image !== undefined) tags[unit] = image.slice(image.lastIndexOf(':') + 1);
  }
  return { active: active as Unit, tags };
}
