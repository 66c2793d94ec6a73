import { z } from 'zod';
import { isoDateTime } from './primitives.ts';
import { tableIdSchema } from './table-id.ts';

/** Why a table is to be scanned. */
export const ScanReason = {
  /** Found by the periodic catalog walk. */
  discovery: 'discovery',
  /** A commit event arrived for it. */
  commit: 'commit',
  /** A maintenance task on it finished. */
  afterTask: 'after-task',
  /** Someone asked (API, CLI). */
  manual: 'manual',
} as const;
export type ScanReason = (typeof ScanReason)[keyof typeof ScanReason];

/** The command "scan this table" on `icepack.scan-requests`. */
export const scanRequestSchema = z.object({
  table: tableIdSchema,
  reason: z.enum(ScanReason),
  requestedAt: isoDateTime,
  /** What led to the request: the commit event's envelope id, or the task id. */
  cause: z
    .object({
      eventId: z.uuid().optional(),
      taskId: z.string().min(1).optional(),
    })
    .optional(),
});
export type ScanRequest = z.output<typeof scanRequestSchema>;
