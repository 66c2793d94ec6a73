// Back-off after a task gives up (ADR 0028): a type whose task failed on a table waits before
// it is planned there again, longer with each consecutive failure, so a task that cannot
// succeed (a writer it keeps conflicting with, a broken table) does not take the catalog's
// slot again at once and at the top of the queue.
import type { TaskType } from '@icepack/types';
import type { Policy } from '@icepack/policy';
import { formatSpan, type Factor, type RuleResult } from './rules.ts';

/** The consecutive failures of one type on one table since its last success (the planner's record). */
export interface FailureStreak {
  /** Consecutive `failed` events since the last success, ≥ 1. */
  readonly count: number;
  /** When the last of them failed (ISO-8601). */
  readonly lastFailedAt: string;
  /** The last failure's error kind (`commit-conflict`, `out-of-memory`, …), if it had one. */
  readonly kind?: string;
}

export type FailureStreaks = Readonly<Partial<Record<TaskType, FailureStreak>>>;

/** The wait after `count` consecutive failures: base × 2^(count−1), at most max. */
export function backOffMs(count: number, backoff: Policy['failureBackoff']): number {
  if (count < 1) return 0;
  // 2^(count−1) overflows nothing before the cap: the exponent stops growing once past it.
  const doublings = Math.min(count - 1, 52);
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** doublings);
}

/** When the type may be planned again on the table; undefined without a failure. */
export function nextTryAt(
  streak: FailureStreak | undefined,
  backoff: Policy['failureBackoff'],
): Date | undefined {
  if (streak === undefined) return undefined;
  return new Date(Date.parse(streak.lastFailedAt) + backOffMs(streak.count, backoff));
}

function runs(count: number): string {
  return count === 1 ? 'the last run failed' : `the last ${count} runs failed`;
}

/**
 * The back-off gate of one type after its failures (met once the back-off after the last one
 * has passed). Its text is what the plan explanation shows.
 */
export function backOffFactor(
  type: TaskType,
  streak: FailureStreak,
  policy: Policy,
  now: Date,
): Factor {
  const wait = backOffMs(streak.count, policy.failureBackoff);
  const next = nextTryAt(streak, policy.failureBackoff)!;
  const why = `${runs(streak.count)}${streak.kind === undefined ? '' : ` (${streak.kind})`}`;
  const met = now.getTime() >= next.getTime();
  return {
    factor: 'back-off',
    value: streak.count,
    met,
    text: met
      ? `${why}; the ${formatSpan(wait)} back-off has passed`
      : `${why}; next try after ${next.toISOString()} (back-off ${formatSpan(wait)} for this ${type}, icepack.failure-backoff)`,
  };
}

/**
 * The rule with the back-off as one more gate when the type has failed since its last success
 * (a type without failures says nothing of it): a held-back type fires nothing and says why;
 * the other types of the table are not touched (each has its own streak).
 */
export function withBackOff(
  rule: RuleResult,
  streak: FailureStreak | undefined,
  policy: Policy,
  now: Date,
): RuleResult {
  if (streak === undefined) return rule;
  const factor = backOffFactor(rule.type, streak, policy, now);
  return {
    ...rule,
    factors: [...rule.factors, factor],
    fires: rule.fires && factor.met,
    blockers: factor.met ? rule.blockers : [...rule.blockers, factor.text],
  };
}
