import { z } from 'zod';
import { IMAGE_TAG_PATTERN } from '../constants';
import { parseCpu, parseMemory } from './quantity';

/** Field schemas shared by the sections of an environment (schema.ts and its section modules). */

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const dnsLabel = z
  .string({ error: 'is required and must be a string' })
  .regex(DNS_LABEL, { error: 'must be a DNS label (lower-case letters, digits and "-", at most 63)' });

export const imageTag = z
  .string({ error: 'is required and must be a string' })
  .regex(IMAGE_TAG_PATTERN, { error: 'must look like v<major>.<minor>.<patch>' });

const cpuQuantity = z
  .string({ error: 'is required and must be a CPU quantity such as "250m" or "1"' })
  .refine((text) => parseCpu(text) !== undefined && parseCpu(text)! > 0, {
    error: 'must be a positive CPU quantity such as "250m" or "1"',
  });

export const memoryQuantity = z
  .string({ error: 'is required and must be a memory quantity such as "256Mi"' })
  .refine((text) => parseMemory(text) !== undefined && parseMemory(text)! > 0, {
    error: 'must be a positive memory quantity in Mi or Gi such as "256Mi" or "1Gi"',
  });

const computeResources = z.strictObject({ cpu: cpuQuantity, memory: memoryQuantity });

/** Requests and limits of one container; limits may not be below requests. */
export const resourcesSchema = z
  .strictObject({ requests: computeResources, limits: computeResources })
  .superRefine((resources, ctx) => {
    const pairs = [
      ['cpu', parseCpu],
      ['memory', parseMemory],
    ] as const;
    for (const [key, parse] of pairs) {
      const request = parse(resources.requests[key]);
      const limit = parse(resources.limits[key]);
      if (request !== undefined && limit !== undefined && limit < request) {
        ctx.addIssue({
          code: 'custom',
          path: ['limits', key],
          input: resources.limits[key],
          message: `must not be below requests.${key} "${resources.requests[key]}"`,
        });
      }
    }
  });


/**
 * A section of nested fields that must be written out: left away, it reads
 * `<path> is required and must be an object` rather than zod's generic type message.
 */
export function section<Shape extends z.core.$ZodLooseShape>(shape: Shape) {
  return z.strictObject(shape, { error: 'is required and must be an object' });
}
