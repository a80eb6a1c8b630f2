import { BLUE_GREEN, LABELS } from '../../contract/contract';
import { parseImageReference, unitName } from '../../contract/naming';
import type { ApplicationOf } from '../../environments';
import { sourceAt } from '../../environments/values-file';
import type { CommittedChart } from '../committed-chart';
import type { BlueGreenUnit } from '../../environments/strategy-blue-green';

/** What the committed chart of a blue-green application runs: the live state under review. */
export interface CommittedBlueGreen {
  /** The unit the committed Service selects (`version=<unit>`). */
  readonly active: BlueGreenUnit;
  /** The committed units and the image tag each runs. */
  readonly tags: Partial<Record<BlueGreenUnit, string>>;
}

function isUnit(value: string | undefined): value is BlueGreenUnit {
  return (BLUE_GREEN.units as readonly (string | undefined)[]).includes(value);
}

/**
 * The blue-green state the committed chart renders for `application`, or undefined when it
 * was not rendered as blue-green there (a change of strategy). Each unit's tag is read from
 * its Deployment's application container, `<registry>/<project>/<application>:<tag>`.
 */
export function committedBlueGreen(chart: CommittedChart, application: string): CommittedBlueGreen | undefined {
  const active = chart.service(application)?.selector[LABELS.version];
  if (!isUnit(active)) return undefined;
  const tags: Partial<Record<BlueGreenUnit, string>> = {};
  for (const unit of BLUE_GREEN.units) {
    const container = chart.deployment(unitName(application, unit))?.containers.find((candidate) => candidate.name === application);
    const tag = container === undefined ? undefined : parseImageReference(container.image).tag;
    if (tag !== undefined) tags[unit] = tag;
  }
  return { active, tags };
}

/**
 * The blue-green procedure (1.4) as three reviewed changes: (1) add the new unit beside the
 * active one, (2) move the Service selector to it once it is healthy, (3) remove the old
 * unit. Each change is judged against the committed chart (what the cluster syncs; `file`
 * names it in messages; the values file and line of the field that made the step lead each
 * message), so a change may not skip a step: switching to a unit that is not running yet,
 * removing the unit that still takes the traffic, or changing the version of the unit that
 * takes the traffic (a rolling update in place, not a blue-green release) is refused.
 */
export function blueGreenTransitionProblems(application: ApplicationOf<'blue-green'>, committed: CommittedBlueGreen | undefined, file: string): string[] {
  if (committed === undefined) return [];
  const { active, units } = application.strategy.blueGreen;
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
