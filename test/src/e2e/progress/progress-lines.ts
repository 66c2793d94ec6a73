import type { HealthFigures, SessionTail, TableId, TableState, TaskEvent } from '@icepack/types';

/**
 * Turns what Icepack publishes into one line a person can read: tables found and re-scanned
 * (`icepack.table-state`), tasks planned, running and finished with what they changed
 * (`icepack.task-events`). Pure: the follower feeds it, tests read its output.
 */
export class ProgressLines {
  /** Last figures shown per table, so a re-scan that changed nothing prints nothing. */
  readonly #shown = new Map<string, string>();

  tableState(key: string, state: TableState | null): string | undefined {
    if (state === null) {
      if (!this.#shown.delete(key)) return undefined;
      return `table ${key} is gone (dropped from the catalog)`;
    }
    const figures = stateFigures(state);
    const previous = this.#shown.get(key);
    if (previous === figures) return undefined;
    this.#shown.set(key, figures);
    const name = tableName(state.table);
    return previous === undefined ? `found   ${name}: ${figures}` : `rescan  ${name}: ${figures}`;
  }

  taskEvent(event: TaskEvent): string | undefined {
    const name = tableName(event.table);
    const what = `${event.taskType} ${name}`;
    switch (event.status) {
      case 'planned':
        return `planned ${what}${event.reason === undefined ? '' : ` — ${event.reason}`}`;
      case 'updated':
        // Aging and re-planning happen all the time; only the start and end are news.
        return undefined;
      case 'queued':
        return `queued  ${what}`;
      case 'started':
        return `running ${what}${(event.attempt ?? 1) > 1 ? ` (attempt ${String(event.attempt)})` : ''}`;
      case 'retrying':
        return `retry   ${what}: ${event.error?.message ?? event.reason ?? 'retryable failure'}`;
      case 'succeeded':
        return `done    ${what}: ${changes(event.before, event.after)}`;
      case 'failed':
        return `FAILED  ${what}: ${event.error?.message ?? event.reason ?? 'no reason given'}`;
      case 'cancelled':
        return `cancelled ${what}${event.reason === undefined ? '' : `: ${event.reason}`}`;
      case 'superseded':
        return `replaced ${what}${event.reason === undefined ? '' : `: ${event.reason}`}`;
      case 'skipped':
        return `skipped ${what}${event.reason === undefined ? '' : `: ${event.reason}`}`;
    }
  }

  /** A resident session's idle tail (ADR 0046): held cores after its last task, not a task's step. */
  sessionTail(tail: SessionTail): string {
    return (
      `idle    session of ${tail.taskType} ${tableName(tail.table)} closed after ` +
      `${String(Math.round(tail.idleMs / 1000))} s idle (${String(tail.cost.coreSecondsRequested)} core-s held)`
    );
  }
}

export function tableName(id: TableId): string {
  return [id.catalog, ...id.namespace, id.name].join('.');
}

function stateFigures(state: TableState): string {
  const f = state.files;
  const deletes = f.positionDeleteFiles + f.equalityDeleteFiles + f.deletionVectors;
  return (
    `${plural(f.dataFiles, 'data file')} (${String(f.smallFiles)} small), ` +
    `${plural(deletes, 'delete file')}, ${plural(state.snapshots.total, 'snapshot')}, ` +
    `${plural(f.records, 'row')}`
  );
}

function changes(before: HealthFigures | undefined, after: HealthFigures | undefined): string {
  if (before === undefined || after === undefined) return 'finished (figures not available)';
  const parts = [
    fromTo('data files', before.dataFiles, after.dataFiles),
    fromTo('small files', before.smallFiles, after.smallFiles),
    fromTo('delete files', before.deleteFiles, after.deleteFiles),
    fromTo('snapshots', before.snapshots, after.snapshots),
    fromTo('bytes', before.bytes, after.bytes),
  ].filter((part) => part !== undefined);
  return parts.length === 0 ? 'nothing to change' : parts.join(', ');
}

function fromTo(what: string, before: number, after: number): string | undefined {
  return before === after ? undefined : `${what} ${String(before)} → ${String(after)}`;
}

function plural(n: number, noun: string): string {
  return `${String(n)} ${noun}${n === 1 ? '' : 's'}`;
}
