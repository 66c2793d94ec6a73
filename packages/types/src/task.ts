import { z } from 'zod';
import { parseWith } from './validation-error.ts';
import { count, int64String, isoDateTime, traceparent } from './primitives.ts';
import { NullOrder, SortDirection } from './table-state.ts';
import { tableIdSchema, tableKey, type TableId } from './table-id.ts';

/** The maintenance a task performs. */
export const TaskType = {
  /** Expire snapshots. */
  cleanup: 'cleanup',
  /** Bin-pack small files and rewrite delete files. */
  merge: 'merge',
  /** Sort or z-order rewrite (also compacts, so it supersedes a pending merge). */
  sort: 'sort',
  /**
   * Move files no snapshot, manifest, metadata or statistics file references into a
   * quarantine, and delete quarantines older than their window (ADR 0032).
   */
  orphans: 'orphans',
} as const;
export type TaskType = (typeof TaskType)[keyof typeof TaskType];
export const taskTypeSchema = z.enum(TaskType);

/**
 * The most tasks of one type a table has pending at once: a partition-scoped plan split by
 * `icepack.max-bytes-per-task` is at most this many groups (docs/planner.md).
 */
export const MAX_TASK_GROUPS = 4;

/**
 * The BullMQ job id of the one pending task per (table, type, partition group):
 * `merge/prod/sales/orders` for group 1 (a table-wide task, or the newest partitions), then
 * `merge/prod/sales/orders#2` … `#MAX_TASK_GROUPS`. Deterministic, so enqueuing twice is a
 * no-op; never contains `:` and is never all digits.
 */
export function taskJobId(table: TableId, type: TaskType, group = 1): string {
  return taskJobIdOfKey(tableKey(table), type, group);
}

/** {@link taskJobId} of the table whose `tableKey` is `key` (made once for many ids). */
export function taskJobIdOfKey(key: string, type: TaskType, group = 1): string {
  const base = `${type}/${key}`;
  return group === 1 ? base : `${base}#${group}`;
}

/** The partition group of a task id (`…#3` → 3, no suffix → 1); null for another table/type. */
export function taskGroupOf(id: string, table: TableId, type: TaskType): number | null {
  const base = taskJobId(table, type);
  if (id === base) return 1;
  const match = /^#([2-9][0-9]*)$/.exec(id.slice(base.length));
  if (!id.startsWith(base) || match === null) return null;
  const group = Number(match[1]);
  return group <= MAX_TASK_GROUPS ? group : null;
}

export const cleanupParametersSchema = z.object({
  /** Expire snapshots older than this instant (Spark's `older_than`). */
  olderThan: isoDateTime,
  /** Keep at least this many snapshots (`retain_last`). */
  retainLast: z.int().min(1),
  /** The retention the cutoff came from, so a late runner may recompute `olderThan`. */
  retentionMs: count.optional(),
});

export const orphansParametersSchema = z.object({
  /**
   * Files last modified before this instant may be orphans (`icepack.orphan.min-age` before
   * planning). The job never uses a cutoff less than a day before its own clock.
   */
  olderThan: isoDateTime,
  /** A quarantine run is deleted by the first run this long after it was made. */
  quarantineWindowMs: count,
  /** At most this many files are moved by one run; the rest wait for the next. */
  maxFiles: z.int().min(1),
});

/**
 * One equality predicate on a source column, or on a transform of it (`day`, `hour`,
 * `bucket[16]`, … as Iceberg writes transforms): `transform(column) = value`, the value as the
 * scanner renders partition values (`2026-01-02` for a day, the hour or bucket number as text).
 * A filter is their conjunction.
 */
export const partitionPredicateSchema = z.object({
  column: z.string().min(1),
  /** Default `identity`. */
  transform: z
    .string()
    .regex(/^(identity|year|month|day|hour|bucket\[[1-9][0-9]*\]|truncate\[[1-9][0-9]*\])$/)
    .optional(),
  value: z.union([z.string(), z.number(), z.boolean(), z.null()]),
});

/** The most partitions one task names (the state lists at most 100). */
export const MAX_TASK_PARTITIONS = 1000;

/** A column of a partition set: `transform(column)` (default `identity`), its value per row. */
export const partitionSetFieldSchema = partitionPredicateSchema.omit({ value: true });

/**
 * Partitions of one shape in compact form (ADR 0034): the predicates' columns and transforms
 * once, and per partition its values in that order — row `k` is the partition
 * `AND_j transform_j(column_j) = values[k][j]`. The same partitions as `partitions` lists
 * them, in about a fifth of the bytes: the planner writes this form, the job reads both.
 */
export const partitionSetSchema = z
  .object({
    fields: z.array(partitionSetFieldSchema).min(1),
    values: z.array(z.array(partitionPredicateSchema.shape.value)).min(1),
  })
  .superRefine((set, ctx) => {
    set.values.forEach((row, k) => {
      if (row.length !== set.fields.length)
        ctx.addIssue({
          code: 'custom',
          path: ['values', k],
          message: `must list ${set.fields.length} values, one per field`,
        });
    });
  });
export type PartitionSet = z.output<typeof partitionSetSchema>;

/** The partitions of `sets` one by one, each the AND of its predicates (identity left implicit). */
export function expandPartitionSets(sets: readonly PartitionSet[]): PartitionPredicate[][] {
  return sets.flatMap((set) =>
    set.values.map((row) => set.fields.map((field, j) => ({ ...field, value: row[j] ?? null }))),
  );
}

/**
 * Partitions (each the AND of its predicates) in compact form: one set per shape — the same
 * columns and transforms in the same order, i.e. one partition spec — in order of first
 * appearance, rows in the order given. {@link expandPartitionSets} gives them back.
 */
export function compactPartitions(
  partitions: readonly (readonly PartitionPredicate[])[],
): PartitionSet[] {
  type Shaped = { fields: PartitionSet['fields']; values: PartitionSet['values'] };
  const sets = new Map<string, Shaped>();
  let last: Shaped | undefined;
  for (const predicates of partitions) {
    // A partition of the previous one's shape (nearly all: one spec per table) joins its set
    // without a shape key: building the key per partition was most of this function's time
    // in the planner benchmark (issue 17 point 6).
    if (last !== undefined && sameShape(last.fields, predicates)) {
      last.values.push(predicates.map((p) => p.value));
      continue;
    }
    // Unambiguous without JSON: the column's length bounds it, and a transform (by its
    // pattern) holds no `|`.
    let shape = '';
    for (const p of predicates)
      shape += `${p.column.length}:${p.column}${p.transform ?? 'identity'}|`;
    let set = sets.get(shape);
    if (set === undefined) {
      set = {
        fields: predicates.map((p) =>
          p.transform === undefined || p.transform === 'identity'
            ? { column: p.column }
            : { column: p.column, transform: p.transform },
        ),
        values: [],
      };
      sets.set(shape, set);
    }
    set.values.push(predicates.map((p) => p.value));
    last = set;
  }
  return [...sets.values()];
}

/** The predicates have the set's columns and transforms, in its order (identity = none). */
function sameShape(
  fields: PartitionSet['fields'],
  predicates: readonly PartitionPredicate[],
): boolean {
  if (fields.length !== predicates.length) return false;
  for (let j = 0; j < fields.length; j++) {
    const f = fields[j]!;
    const p = predicates[j]!;
    const transform = p.transform === 'identity' ? undefined : p.transform;
    if (f.column !== p.column || f.transform !== transform) return false;
  }
  return true;
}

const mergeShape = {
  targetFileSizeBytes: z.int().min(1),
  /** Files below this are rewritten. */
  minFileSizeBytes: count,
  /** Files above this are split. */
  maxFileSizeBytes: z.int().min(1),
  /** Rewrite a file group only when it has at least this many files. */
  minInputFiles: z.int().min(1),
  /** Rewrite data files that have at least this many delete files. */
  deleteFileThreshold: z.int().min(1),
  /** Also run `rewrite_position_delete_files`. */
  rewritePositionDeletes: z.boolean(),
  partialProgress: z
    .object({ enabled: z.boolean(), maxCommits: z.int().min(1).optional() })
    .optional(),
  /** Rewrite only matching partitions (AND of equalities). Data, never SQL text. */
  partitionFilter: z.array(partitionPredicateSchema).min(1).optional(),
  /**
   * A partition-scoped plan: rewrite only files of these partitions (each the AND of its
   * predicates; the task covers any of them). Absent: the whole table.
   */
  partitions: z
    .array(z.array(partitionPredicateSchema).min(1))
    .min(1)
    .max(MAX_TASK_PARTITIONS)
    .optional(),
  /**
   * The same in compact form ({@link partitionSetSchema}); the task covers any partition of
   * `partitions` and of these. The planner writes this form (ADR 0034).
   */
  partitionSets: z.array(partitionSetSchema).min(1).optional(),
};

/** At most MAX_TASK_PARTITIONS partitions named, over both forms. */
function checkPartitionCount(
  p: { partitions?: readonly unknown[]; partitionSets?: readonly PartitionSet[] },
  ctx: z.RefinementCtx,
): void {
  const named =
    (p.partitions?.length ?? 0) +
    (p.partitionSets ?? []).reduce((n, set) => n + set.values.length, 0);
  if (named > MAX_TASK_PARTITIONS) {
    ctx.addIssue({
      code: 'custom',
      path: ['partitionSets'],
      message: `names ${named} partitions, at most ${MAX_TASK_PARTITIONS}`,
    });
  }
}

function checkSizes(
  p: { minFileSizeBytes: number; targetFileSizeBytes: number; maxFileSizeBytes: number },
  ctx: z.RefinementCtx,
): void {
  if (p.minFileSizeBytes > p.targetFileSizeBytes) {
    ctx.addIssue({
      code: 'custom',
      path: ['minFileSizeBytes'],
      message: 'must not exceed targetFileSizeBytes',
    });
  }
  if (p.maxFileSizeBytes < p.targetFileSizeBytes) {
    ctx.addIssue({
      code: 'custom',
      path: ['maxFileSizeBytes'],
      message: 'must not be below targetFileSizeBytes',
    });
  }
}

export const mergeParametersSchema = z
  .object(mergeShape)
  .superRefine(checkSizes)
  .superRefine(checkPartitionCount);

/**
 * `sort` by columns, `zorder` (Iceberg's), or `hilbert`: the Hilbert curve over two numeric,
 * date or timestamp columns (the job's own rewrite through Iceberg's file-scan-task sets; ADR 0033).
 */
export const SortStrategy = { sort: 'sort', zorder: 'zorder', hilbert: 'hilbert' } as const;
/** The number of columns a Hilbert layout orders by: the job's curve is two-dimensional. */
export const HILBERT_DIMENSIONS = 2;
export type SortStrategy = (typeof SortStrategy)[keyof typeof SortStrategy];

export const sortColumnSchema = z.object({
  name: z.string().min(1),
  direction: z.enum(SortDirection).default('asc'),
  nullOrder: z.enum(NullOrder).default('nulls-first'),
});

export const sortParametersSchema = z
  .object({
    ...mergeShape,
    strategy: z.enum(SortStrategy),
    columns: z.array(sortColumnSchema).min(1),
  })
  .superRefine(checkSizes)
  .superRefine(checkPartitionCount)
  .superRefine((p, ctx) => {
    if (p.strategy === SortStrategy.hilbert && p.columns.length !== HILBERT_DIMENSIONS) {
      ctx.addIssue({
        code: 'custom',
        path: ['columns'],
        message: `must name exactly ${HILBERT_DIMENSIONS} columns for hilbert`,
      });
    }
  });

/** Lower number runs first: BullMQ's range. */
export const MIN_PRIORITY = 1;
export const MAX_PRIORITY = 2_097_151;

export const scorePartSchema = z.object({
  /** e.g. `small-files`, `delete-files`, `snapshots`, `new-data-share`, `waiting`. */
  factor: z.string().min(1),
  value: z.number(),
  threshold: z.number().optional(),
  points: z.number(),
});

export const scoreSchema = z.object({
  /** BullMQ priority derived from `total`: 1 runs first. */
  priority: z.int().min(MIN_PRIORITY).max(MAX_PRIORITY),
  total: z.number(),
  parts: z.array(scorePartSchema),
});

/** The TableState the task came from, by reference, plus what the dispatcher sizes by. */
export const taskStateRefSchema = z.object({
  /**
   * The table's UUID when it was scanned: the job refuses a table under the task's name with
   * another UUID (dropped and recreated, or a name resolving to another table).
   */
  tableUuid: z.string().min(1),
  metadataLocation: z.string().min(1),
  snapshotId: int64String.nullable(),
  bytesToRewrite: count,
  filesToRewrite: count,
});

const taskBase = {
  id: z.string().min(1),
  table: tableIdSchema,
  score: scoreSchema,
  createdAt: isoDateTime,
  state: taskStateRefSchema,
  traceparent: traceparent.optional(),
};

/** The BullMQ job data: one maintenance task on one table. */
export const taskSchema = z
  .discriminatedUnion('type', [
    z.object({
      ...taskBase,
      type: z.literal(TaskType.cleanup),
      parameters: cleanupParametersSchema,
    }),
    z.object({ ...taskBase, type: z.literal(TaskType.merge), parameters: mergeParametersSchema }),
    z.object({ ...taskBase, type: z.literal(TaskType.sort), parameters: sortParametersSchema }),
    z.object({
      ...taskBase,
      type: z.literal(TaskType.orphans),
      parameters: orphansParametersSchema,
    }),
  ])
  .superRefine((task, ctx) => {
    if (taskGroupOf(task.id, task.table, task.type) === null) {
      const expected = taskJobId(task.table, task.type);
      ctx.addIssue({
        code: 'custom',
        path: ['id'],
        message: `must be ${JSON.stringify(expected)} or ${JSON.stringify(`${expected}#2`)} … #${MAX_TASK_GROUPS} (taskJobId)`,
      });
    }
  });

export type Task = z.output<typeof taskSchema>;
export type TaskInput = z.input<typeof taskSchema>;
export type CleanupParameters = z.output<typeof cleanupParametersSchema>;
export type MergeParameters = z.output<typeof mergeParametersSchema>;
export type SortParameters = z.output<typeof sortParametersSchema>;
export type OrphansParameters = z.output<typeof orphansParametersSchema>;
export type TaskScore = z.output<typeof scoreSchema>;
export type TaskParameters = Task['parameters'];
export type PartitionPredicate = z.output<typeof partitionPredicateSchema>;

/** Validates BullMQ job data; throws `ValidationError` naming the field. */
export function parseTask(value: unknown): Task {
  return parseWith(taskSchema, value, 'task');
}
