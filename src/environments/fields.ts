import { CronExpressionParser } from 'cron-parser';
import * as z from 'zod';
import { INFRASTRUCTURE_NAMESPACES } from '../contract/choices';
import { IMAGE_TAG_PATTERN } from '../contract/contract';
import { RESERVED_NAMESPACES } from '../contract/upstream';
import { memoryQuantityOf, parseCpu, parseMemory } from './quantity';

/** Field schemas shared by the sections of an environment (schema.ts and its section modules). */

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const dnsLabel = z
  .string({ error: 'is required and must be a string' })
  .regex(DNS_LABEL, { error: 'must be a DNS label (lower-case letters, digits and "-", at most 63)' });

/**
 * A namespace a unit of the platform owns: a DNS label that is neither one Kubernetes
 * reserves (`default`, `kube-*`) nor one of the infrastructure's.
 */
export const namespaceName = dnsLabel.superRefine((namespace, ctx) => {
  if ((RESERVED_NAMESPACES as readonly string[]).includes(namespace)) {
    ctx.addIssue({ code: 'custom', input: namespace, message: `must not be a namespace Kubernetes reserves (${RESERVED_NAMESPACES.join(', ')})` });
  } else if ((Object.values(INFRASTRUCTURE_NAMESPACES) as string[]).includes(namespace)) {
    ctx.addIssue({ code: 'custom', input: namespace, message: 'must not be a namespace of the infrastructure' });
  }
});

/**
 * cron-parser computes with luxon dates (it builds one for "now" on every parse) and formats
 * none here. Without a default locale luxon asks ICU for the system's (`new
 * Intl.DateTimeFormat()`), which costs about 20 ms at start, a twentieth of a synth. The
 * locale only affects formatting; parsing a schedule is the same in every locale.
 */
// `require`, not `import`: luxon ships a CommonJS and an ES module build, and cron-parser
// requires the CommonJS one; an `import` would set the other copy's settings.
const { Settings: LuxonSettings } = require('luxon') as typeof import('luxon');
LuxonSettings.defaultLocale = 'en-US';

/** The descriptors a Kubernetes CronJob accepts besides five fields (robfig/cron, which it uses). */
const CRON_DESCRIPTORS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

/**
 * Why a schedule is not one a Kubernetes CronJob accepts, or undefined: five fields
 * (minute 0-59, hour 0-23, day of month 1-31, month 1-12 or JAN-DEC, day of week 0-6 or
 * SUN-SAT) or a descriptor. Ranges and syntax are checked by cron-parser; the extensions it
 * accepts beyond Kubernetes' parser (seconds, `L`, `W`, `#`, 7 for Sunday) are refused here.
 */
export function cronProblem(schedule: string): string | undefined {
  const text = schedule.trim();
  if (text.startsWith('@')) {
    return CRON_DESCRIPTORS.includes(text) ? undefined : `must be five cron fields or one of ${CRON_DESCRIPTORS.join(', ')}`;
  }
  const fields = text.split(/\s+/);
  if (fields.length !== 5) return `must be a cron expression of five fields (minute hour day-of-month month day-of-week), not ${fields.length}`;
  try {
    CronExpressionParser.parse(text);
  } catch (error) {
    return `must be a valid cron expression: ${(error as Error).message}`;
  }
  const [, , dayOfMonth, , dayOfWeek] = fields as [string, string, string, string, string];
  if (/[#]|(^|[^A-Za-z])L|\dW|^W/i.test(`${dayOfMonth} ${dayOfWeek}`.replace(/\b(SAT|SUN|MON|TUE|WED|THU|FRI)\b/gi, ''))) {
    return 'must use only *, ranges, lists and steps (L, W and # are not understood by Kubernetes)';
  }
  if (dayOfWeek.split(/[,\-/]/).some((part) => /^\d+$/.test(part) && Number(part) > 6)) return 'must give the day of week as 0-6 (Sunday is 0)';
  return undefined;
}

export const cronSchedule = z.string({ error: 'is required and must be a string' }).superRefine((schedule, ctx) => {
  const problem = cronProblem(schedule);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', input: schedule, message: problem });
});

export const imageTag = z
  .string({ error: 'is required and must be a string' })
  .regex(IMAGE_TAG_PATTERN, { error: 'must look like v<major>.<minor>.<patch>' })
  // The longest tag a registry keeps (the OCI distribution spec's tag grammar: 128 characters).
  .max(128, { error: 'must be at most 128 characters (a registry keeps no longer tag)' });

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

const computeResources = z.strictObject({
  cpu: cpuQuantity.meta({ description: 'CPU in cores or millicores, e.g. "1" or "250m".' }),
  memory: memoryQuantity.meta({ description: 'Memory in Mi or Gi, e.g. "256Mi" or "1Gi".' }),
});

/** Requests and limits of one container as written; limits may not be below requests. */
const resourceQuantities = z
  .strictObject({
    requests: computeResources.meta({ description: 'What the scheduler reserves for the container.' }),
    limits: computeResources.meta({ description: 'The most the container may use; not below requests.' }),
  })
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
 * Requests and limits of one container, described (`description`, shown by editors), each
 * memory quantity parsed once, here at the edge: constructs read its mebibytes from the
 * validated values and never parse a quantity again. The JSON of the values is unchanged
 * (MemoryQuantity's toJSON is its text), and so is the JSON Schema: it is generated from the
 * input side (io: 'input'), the description on the object as before.
 */
export function resourcesSchema(description: string) {
  return resourceQuantities.meta({ description }).transform(({ requests, limits }) => ({
    requests: { cpu: requests.cpu, memory: memoryQuantityOf(requests.memory) },
    limits: { cpu: limits.cpu, memory: memoryQuantityOf(limits.memory) },
  }));
}


/**
 * A section of nested fields that must be written out: left away or not a mapping, it reads
 * `<path> is required: a mapping with <its fields>` (sectionMessage) rather than zod's
 * generic type message.
 */
export function section<Shape extends z.core.$ZodLooseShape>(shape: Shape) {
  return z.strictObject(shape);
}

/**
 * The message of a section (an object, or a union of objects told apart by a field) that is
 * missing or is not a mapping: `is required: a mapping with <fields>` or `must be a mapping with
 * <fields>`, naming what it holds; undefined for every other issue (zod's own or the schema's).
 * Given to every parse of a values file (src/environments/validate.ts), so no section of any
 * schema ever reads zod's "Invalid input: expected object".
 */
export function sectionMessage(issue: z.core.$ZodRawIssue): string | undefined {
  const def = (issue.inst as { _zod?: { def?: any } } | undefined)?._zod?.def;
  const input = issue.input;
  if (input !== undefined && typeof input === 'object' && input !== null && !Array.isArray(input)) return undefined;
  let holds: string | undefined;
  if (def?.type === 'object') {
    const fields = Object.keys(def.shape as object);
    holds = fields.length > 0 ? `a mapping with ${fields.join(', ')}` : 'a mapping';
  } else if (def?.type === 'union' && typeof def.discriminator === 'string') {
    const kinds = (def.options as { _zod: { def: { shape: Record<string, { _zod: { def: { values?: unknown[] } } }> } } }[])
      .flatMap((option) => option._zod.def.shape[def.discriminator]?._zod.def.values ?? []);
    holds = `a mapping with ${def.discriminator} (one of ${kinds.join(', ')}) and that ${def.discriminator}'s fields`;
  } else if (def?.type === 'record') {
    holds = 'a mapping';
  }
  if (holds === undefined) return undefined;
  return input === undefined ? `is required: ${holds}` : `must be ${holds}`;
}

/**
 * An OCI registry location as Helm names one: `oci://<host>[:<port>][/<path>]`, the path's
 * components lower-case as OCI repository names are (distribution's reference grammar).
 */
export const OCI_REGISTRY_PATTERN =
  /^oci:\/\/([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*(?::(?:[1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5]))?)((?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)$/;

/** What OCI_REGISTRY_PATTERN asks for, in words. */
export const OCI_REGISTRY_RULE = 'oci://<host>[:<port>][/<path>]: a lower-case host and path (as OCI repositories are named), a port 1-65535, no trailing "/"';

export const ociRegistry = z
  .string({ error: 'is required and must be a string' })
  .regex(OCI_REGISTRY_PATTERN, { error: `must be an OCI registry such as "oci://ghcr.io/example/platform-gitops-charts" (${OCI_REGISTRY_RULE})` });
