// When each task type last succeeded on a table: the planner's record, from the `succeeded`
// task events (decision 0005), laid over the table state the rules read.
import type { TableState, TaskType } from '@icepack/types';

export type LastMaintenance = NonNullable<TableState['lastMaintenance']>;

function later(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Date.parse(a) >= Date.parse(b) ? a : b;
}

/**
 * The state with `lastMaintenance` from the planner's record: per task type the later of
 * the record and what the state already carried (a state never moves a success back).
 */
export function withLastMaintenance(state: TableState, record: LastMaintenance): TableState {
  const merged: Partial<Record<TaskType, string>> = {};
  for (const type of ['cleanup', 'merge', 'sort', 'orphans'] as const) {
    const at = later(state.lastMaintenance?.[type], record[type]);
    if (at !== undefined) merged[type] = at;
  }
  return { ...state, lastMaintenance: merged };
}
