import * as z from 'zod';
import { primaryName } from '../contract/naming';
import { oneDeploymentStrategy } from './strategy-values';

/**
 * Canary (1.4, 2.3): `strategy: { type: canary, canary: { loadTest } }`, one Deployment at
 * `image.tag` with `replicas` pods, which Flagger copies to `<application>-primary` and
 * analyses behind its `<application>-canary` Service.
 */
export const canary = oneDeploymentStrategy({
  type: 'canary',
  schema: z.strictObject({
    type: z.literal('canary').meta({ description: "Canary: Flagger shifts traffic to the new version step by step while its metrics hold." }),
    canary: z
      .strictObject({
        loadTest: z
          .boolean({ error: 'must be true or false' })
          .meta({
            description:
              "Send synthetic traffic from Flagger's load tester during analysis, so that an idle environment " +
              'still produces the request metrics the thresholds read. Default: false.',
          })
          .optional(),
      })
      .meta({ description: 'Settings of the canary analysis. Default: every setting at its default.' })
      .optional(),
  }),
  derivedNames: (application) => [
    { name: primaryName(application), use: 'Flagger primary Deployment and its label app' },
    { name: `${application}-canary`, use: 'Flagger canary Service' },
  ],
  // Flagger copies the Deployment to `-primary`, which serves; the Deployment itself runs the
  // candidate during an analysis and is scaled to 0 between them (Flagger docs, "How it works").
  liveWorkloads: (name, application) => [
    { deployment: primaryName(name), role: 'primary', serves: true },
    { deployment: name, role: 'canary', serves: false, tag: application.image.tag },
  ],
});
