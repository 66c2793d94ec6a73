/**
 * Why a task taken off its queue went back to wait (delayed for `ICEPACK_QUOTA_WAIT`): the
 * catalog's quota had no room for it, or large tasks held all its `slots` (ADR 0029).
 */
export const WaitKind = {
  quota: 'quota',
  largeSlot: 'large-slot',
} as const;
export type WaitKind = (typeof WaitKind)[keyof typeof WaitKind];

/**
 * The wait a job records as told (an `updated` task event): the attempt and what it waits
 * for. Kept in the job's hash, so it outlives the worker slot, the dispatcher and its restart.
 */
export function waitMark(attempt: number, kind: WaitKind): string {
  return `${String(attempt)}:${kind}`;
}

/**
 * Whether a task put back to wait is told with a task event (ADR 0041): when it starts
 * waiting — its attempt's first wait, or a wait for something else than the last one told —
 * not at each re-check every `ICEPACK_QUOTA_WAIT` that finds it still waiting (3,127 events
 * in a 30-min lake-sim, most of them these). The re-checks are still counted by the metrics
 * (`onWait`). `told` is the job's recorded mark, none (or empty) when nothing was told or an
 * event of another kind came between (a runner error puts the task back with its own).
 */
export function waitIsNews(
  told: string | null | undefined,
  attempt: number,
  kind: WaitKind,
): boolean {
  return told !== waitMark(attempt, kind);
}
