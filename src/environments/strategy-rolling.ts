import * as z from 'zod';
import { oneDeploymentStrategy } from './strategy-values';

/** Rolling update (1.4): `strategy: { type: rolling }`, one Deployment at `image.tag` with `replicas` pods. */
export const rolling = oneDeploymentStrategy({
  type: 'rolling',
  schema: z.strictObject({
    type: z.literal('rolling').meta({ description: 'Rolling update: the Deployment replaces its pods a few at a time.' }),
  }),
});
