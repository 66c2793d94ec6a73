/** Redis key prefix for every BullMQ queue of Icepack (BullMQ's `prefix` option). */
export const BULLMQ_PREFIX = 'icepack';

const QUEUE_UNSAFE = /[%:/\s]/gu;

/**
 * The BullMQ queue of a catalog's tasks: `icepack-tasks-<catalog>`. BullMQ joins key parts
 * with `:`, so `:` (and `%`, `/`, whitespace) in a catalog name are percent-encoded.
 */
export function queueNameForCatalog(catalog: string): string {
  if (catalog === '') throw new TypeError('catalog name must not be empty');
  return `icepack-tasks-${catalog.replace(QUEUE_UNSAFE, encodeURIComponent)}`;
}

/**
 * The field of a task's BullMQ job hash where the dispatcher records where the running attempt
 * runs and where its logs are (`RunLocation` JSON, written with `started`); deleted with the
 * job. The console's queue page reads it.
 */
export const JOB_RUN_LOCATION_FIELD = 'icepack:run';
