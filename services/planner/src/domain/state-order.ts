import type { TableState } from '@icepack/types';

/** What orders a state: the planner reads only this (and the head around it) of the stored one. */
export type StateVersion = Pick<
  TableState,
  'tableUuid' | 'lastSequenceNumber' | 'metadataLocation' | 'scannedAt'
>;

/** How a received table state relates to the latest one the planner acted on. */
export const StateOrder = { newer: 'newer', same: 'same', older: 'older' } as const;
export type StateOrder = (typeof StateOrder)[keyof typeof StateOrder];

/**
 * Orders two states of one table: by last sequence number (64-bit, compared as bigint),
 * then by scan time (a property change commits new metadata without a new sequence
 * number). A different table UUID means the table was dropped and re-created: newer.
 */
export function compareStates(
  latest: StateVersion | undefined,
  incoming: StateVersion,
): StateOrder {
  if (latest === undefined || latest.tableUuid !== incoming.tableUuid) return StateOrder.newer;
  const a = BigInt(latest.lastSequenceNumber);
  const b = BigInt(incoming.lastSequenceNumber);
  if (b !== a) return b > a ? StateOrder.newer : StateOrder.older;
  if (
    incoming.metadataLocation === latest.metadataLocation &&
    incoming.scannedAt === latest.scannedAt
  ) {
    return StateOrder.same;
  }
  const ta = Date.parse(latest.scannedAt);
  const tb = Date.parse(incoming.scannedAt);
  if (tb < ta) return StateOrder.older;
  if (tb === ta && incoming.metadataLocation === latest.metadataLocation) return StateOrder.same;
  return StateOrder.newer;
}
