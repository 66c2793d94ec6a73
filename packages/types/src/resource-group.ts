import { z } from 'zod';
import { parseWith } from './validation-error.ts';
import { dnsLabel, stringMap } from './primitives.ts';
import {
  isSparkMemory,
  parseCpuMillicores,
  parseMemoryBytes,
  parseSparkMemoryBytes,
} from './quantity.ts';
import { rejectInlineSecrets } from './secret-ref.ts';

/** A group's Kubernetes namespace is `icepack-<group>`; a namespace name is ≤ 63 chars. */
export const NAMESPACE_PREFIX = 'icepack-';
export const MAX_GROUP_NAME_LENGTH = 63 - NAMESPACE_PREFIX.length;

export function namespaceForGroup(group: string): string {
  return `${NAMESPACE_PREFIX}${group}`;
}

function isPositive(text: string, parse: (text: string) => number): boolean {
  try {
    return parse(text) > 0;
  } catch {
    return false;
  }
}

/** A positive Kubernetes quantity, e.g. cpu "8" / "500m", memory "32Gi". */
function positiveQuantity(what: 'cpu' | 'memory') {
  const parse = what === 'cpu' ? parseCpuMillicores : parseMemoryBytes;
  return z.string().refine((text) => isPositive(text, parse), {
    error: `expected a positive Kubernetes ${what} quantity, e.g. ${what === 'cpu' ? '"8" or "500m"' : '"32Gi" or "512Mi"'}`,
  });
}

const sparkMemory = z
  .string()
  .refine(isSparkMemory, { error: 'expected a Spark memory size, e.g. "4g" or "512m"' });

/** Defaults of `spark` in a resource group. */
export const SPARK_DEFAULTS = {
  driverCores: 1,
  driverMemory: '2g',
  executorCores: 2,
  executorMemory: '4g',
  maxExecutors: 4,
} as const;

/** How the group's Spark jobs are shaped; the dispatcher sizes each job within these. */
export const sparkSettingsSchema = z.strictObject({
  /** Default: the image the deployment configures for jobs. */
  image: z.string().min(1).optional(),
  /** Default 1. */
  driverCores: z.int().min(1).default(SPARK_DEFAULTS.driverCores),
  /** Default "2g". */
  driverMemory: sparkMemory.default(SPARK_DEFAULTS.driverMemory),
  /** Default 2. */
  executorCores: z.int().min(1).default(SPARK_DEFAULTS.executorCores),
  /** Default "4g". */
  executorMemory: sparkMemory.default(SPARK_DEFAULTS.executorMemory),
  /** Upper bound per job; default 4. */
  maxExecutors: z.int().min(1).default(SPARK_DEFAULTS.maxExecutors),
  /** Extra `spark.*` settings; no secrets. Default {}. */
  sparkConf: stringMap.superRefine(rejectInlineSecrets).default({}),
});
export type SparkSettings = z.output<typeof sparkSettingsSchema>;

/** Default `smallSlots`: one task slot kept for small tasks beside the group's `slots`. */
export const DEFAULT_SMALL_SLOTS = 1;
/** Bound on `smallSlots`: each is a Spark job that may run at once. */
export const MAX_SMALL_SLOTS = 100;

/**
 * The compute budget of one catalog (1:1): a namespace `icepack-<name>` with a quota of
 * `cpu`/`memory`, running at most `slots` tasks of any size at once plus `smallSlots` small
 * ones (ADR 0029). Unknown keys are rejected.
 */
export const resourceGroupSchema = z
  .strictObject({
    name: dnsLabel(MAX_GROUP_NAME_LENGTH),
    catalog: dnsLabel(63),
    cpu: positiveQuantity('cpu'),
    memory: positiveQuantity('memory'),
    slots: z.int().min(1),
    /** Slots only small tasks take, so large tables cannot starve small ones. Default 1. */
    smallSlots: z.int().min(0).max(MAX_SMALL_SLOTS).default(DEFAULT_SMALL_SLOTS),
    spark: sparkSettingsSchema.default(() => sparkSettingsSchema.parse({})),
  })
  .superRefine((group, ctx) => {
    // The smallest job (driver + one executor) must fit the group's quota. Field errors
    // are reported above; this check only runs on well-formed values.
    const { driverCores, executorCores, driverMemory, executorMemory } = group.spark;
    if (!isPositive(group.cpu, parseCpuMillicores) || !isPositive(group.memory, parseMemoryBytes))
      return;
    if (!isSparkMemory(driverMemory) || !isSparkMemory(executorMemory)) return;
    const cores = driverCores + executorCores;
    if (cores * 1000 > parseCpuMillicores(group.cpu)) {
      ctx.addIssue({
        code: 'custom',
        path: ['cpu'],
        message: `too small for one job: driverCores + executorCores = ${cores} cores`,
      });
    }
    if (
      parseSparkMemoryBytes(driverMemory) + parseSparkMemoryBytes(executorMemory) >
      parseMemoryBytes(group.memory)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['memory'],
        message: `too small for one job: driverMemory + executorMemory = ${driverMemory} + ${executorMemory}`,
      });
    }
  });
export type ResourceGroup = z.output<typeof resourceGroupSchema>;
export type ResourceGroupInput = z.input<typeof resourceGroupSchema>;

/** Validates a resource group (API body, declarative file); throws `ValidationError`. */
export function parseResourceGroup(value: unknown): ResourceGroup {
  return parseWith(resourceGroupSchema, value, 'resource group');
}
