import * as z from 'zod';
import { RefusedError } from '../base/errors';
import { BLUE_GREEN } from '../contract/contract';
import { unitName } from '../contract/naming';
import { imageTag } from './fields';
import { compareTags, type EditTarget, type FieldEdit, type StrategyApplication, type StrategyValues, type ValuesIssue, type WorkloadFields, type WorkloadValues } from './strategy-values';

/** A blue-green unit: `blue` or `green`. */
export type BlueGreenUnit = (typeof BLUE_GREEN.units)[number];

/** The unit beside `unit`. */
export function otherUnit(unit: BlueGreenUnit): BlueGreenUnit {
  return unit === 'blue' ? 'green' : 'blue';
}

const unitSchema = (unit: BlueGreenUnit) =>
  z
    .strictObject({ tag: imageTag.meta({ description: `Image tag the ${unit} unit runs, v<major>.<minor>.<patch>.` }) })
    .meta({ description: `The ${unit} unit: its own Deployment of ${BLUE_GREEN.replicasPerUnit} pods. Default: not rendered.` })
    .optional();
const unitNameSchema = z.enum(BLUE_GREEN.units, { error: `must be one of ${BLUE_GREEN.units.join(', ')}` });

const schema = z.strictObject({
  type: z.literal('blue-green').meta({ description: 'Blue-green: two units side by side; the Service selects the active one.' }),
  blueGreen: z
    .strictObject({
      active: unitNameSchema.meta({ description: `The unit the Service selects (${BLUE_GREEN.units.join(' or ')}); it must be rendered.` }),
      units: z
        .strictObject({ blue: unitSchema('blue'), green: unitSchema('green') })
        .meta({ description: 'The units rendered side by side, each with its own image tag; at least one.' }),
    })
    .meta({ description: 'Which units run and which one serves.' })
    .superRefine((blueGreen, ctx) => {
      const rendered = BLUE_GREEN.units.filter((unit) => blueGreen.units[unit] !== undefined);
      if (rendered.length === 0) {
        ctx.addIssue({ code: 'custom', path: ['units'], input: blueGreen.units, message: 'must render at least one unit (blue or green)' });
      } else if (!rendered.includes(blueGreen.active)) {
        ctx.addIssue({
          code: 'custom',
          path: ['active'],
          input: blueGreen.active,
          message: `is not one of the rendered units (${rendered.join(', ')})`,
        });
      }
    }),
});

/** The `replicas` and `image.tag` of a blue-green application: left out, each unit carries its own. */
export interface BlueGreenFields {
  readonly replicas?: undefined;
  readonly image: { readonly tag?: undefined };
}

function leavesOut<V extends WorkloadValues>(values: V): values is V & BlueGreenFields {
  return values.replicas === undefined && values.image.tag === undefined;
}

const LEFT_OUT: WorkloadFields<BlueGreenFields> = {
  check(values) {
    if (leavesOut(values)) return { values };
    const issues: ValuesIssue[] = [];
    if (values.image.tag !== undefined) {
      issues.push({
        path: ['image', 'tag'],
        input: values.image.tag,
        message: 'must be left out with the blue-green strategy: each unit in strategy.blueGreen.units carries its tag',
      });
    }
    if (values.replicas !== undefined) {
      issues.push({
        path: ['replicas'],
        input: values.replicas,
        message: `must be left out with the blue-green strategy: each unit runs ${BLUE_GREEN.replicasPerUnit} pods (contract 2.1)`,
      });
    }
    return { issues };
  },
  described: {
    replicas: `left out with blue-green, where each unit runs ${BLUE_GREEN.replicasPerUnit}`,
    tag: 'left out with blue-green, whose units carry their own tags',
  },
};

type BlueGreenApplication = StrategyApplication<z.output<typeof schema>, BlueGreenFields>;

function runningTag({ strategy }: BlueGreenApplication): string {
  // Validated: the active unit is one of the rendered units.
  return strategy.blueGreen.units[strategy.blueGreen.active]!.tag;
}

/** Blue-green step 2 (1.4 steps 4-5): the Service selects the other unit, which must be running. */
function switchUnits({ strategy }: BlueGreenApplication, target: EditTarget): FieldEdit {
  const { active, units } = strategy.blueGreen;
  const next = otherUnit(active);
  const unit = units[next];
  if (unit === undefined) {
    throw new RefusedError(`${target.label}: there is no ${next} unit to switch to; run \`npm run release -- ${target.options} --tag <tag>\` first`);
  }
  return {
    path: ['strategy', 'blueGreen', 'active'],
    value: next,
    unchanged: false,
    summary: `${target.label}: traffic ${active} (${units[active]!.tag}) -> ${next} (${unit.tag}); retire ${active} with \`npm run retire -- ${target.options}\` once ${next} is healthy`,
  };
}

/**
 * Blue-green (1.4, 2.1): `strategy.blueGreen.units` run side by side, each its own
 * Deployment at its own tag; the Service selects `strategy.blueGreen.active`. A release adds
 * the new version as the inactive unit, `switch` moves the traffic, `retire` removes the old
 * unit; each step is one reviewed change (./steps.ts judges it against the committed chart).
 */
export const blueGreen: StrategyValues<typeof schema, BlueGreenFields> = {
  type: 'blue-green',
  schema,
  workload: LEFT_OUT,
  runningTag,
  // The new unit starts beside the old one, so its migrations run first and must keep the
  // schema readable by the old version (expand, then contract in a later release).
  newestTag({ strategy }) {
    return Object.values(strategy.blueGreen.units)
      .map((unit) => unit!.tag)
      .reduce((newest, tag) => (compareTags(tag, newest) > 0 ? tag : newest));
  },
  // The inactive unit's tag (the unit is added when absent): the new version comes up beside
  // the active one, and traffic moves only with `switch`.
  release(application, tag, target) {
    const { active, units } = application.strategy.blueGreen;
    const inactive = otherUnit(active);
    const previous = units[inactive]?.tag;
    const running = runningTag(application);
    return {
      path: ['strategy', 'blueGreen', 'units', inactive, 'tag'],
      value: tag,
      // The active unit already serving the tag counts too: a second copy would serve nothing.
      unchanged: previous === tag || running === tag,
      summary:
        `${target.label}: unit ${inactive} ${previous === undefined ? 'added with' : `${previous} ->`} ${tag} beside ${active} ` +
        `(active, ${running}); traffic stays on ${active} until \`npm run switch -- ${target.options}\``,
    };
  },
  steps: {
    switch: switchUnits,
    // Blue-green step 3 (1.4 step 6): remove the unit that no longer takes traffic.
    retire({ strategy }, target) {
      const { active, units } = strategy.blueGreen;
      const old = otherUnit(active);
      const unit = units[old];
      if (unit === undefined) throw new RefusedError(`${target.label}: only the active unit ${active} runs; there is nothing to retire`);
      return {
        path: ['strategy', 'blueGreen', 'units', old],
        value: undefined,
        unchanged: false,
        summary: `${target.label}: unit ${old} (${unit.tag}) removed; ${active} (${units[active]!.tag}) runs alone`,
      };
    },
    // While the older unit still runs beside the active one, traffic switches back to it.
    rollback(application, target) {
      const older = application.strategy.blueGreen.units[otherUnit(application.strategy.blueGreen.active)];
      return older !== undefined && compareTags(older.tag, runningTag(application)) < 0 ? switchUnits(application, target) : undefined;
    },
  },
  derivedNames: (application) => BLUE_GREEN.units.map((unit) => ({ name: unitName(application, unit), use: 'blue-green Deployment' })),
  liveWorkloads: (name, { strategy }) =>
    BLUE_GREEN.units.flatMap((unit) => {
      const rendered = strategy.blueGreen.units[unit];
      return rendered === undefined ? [] : [{ deployment: unitName(name, unit), role: unit, serves: unit === strategy.blueGreen.active, tag: rendered.tag }];
    }),
};
