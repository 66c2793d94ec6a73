import type { RedisOptions } from 'ioredis';

/**
 * The planner's ioredis options, on top of the service's own (role, auth, TLS).
 *
 * Auto-pipelining: commands issued while the connection is busy go out together, in one
 * socket write, and their replies come back in one read. Per table state the planner sends
 * 7–9 commands (reads of the state head, the table's jobs and its outcomes; BullMQ adds or the
 * update script; the state put), 16 states in flight; one write per command was the largest
 * single cost of a state (issue 17 point 6, `writeUtf8String` in the profile). Order on the
 * connection is kept (one pipeline at a time, commands in issue order), which the created
 * index relies on (its `ZADD` goes before BullMQ's add, both on the queue connection).
 * `main.ts` opens two connections with these options: the planner's own, and one for BullMQ's
 * queue objects (ADR 0039's amendment). No blocking command runs on this
 * connection (BullMQ workers live in the dispatcher, on their own connections); one would
 * hold up every command queued behind it.
 */
export const PLANNER_REDIS_OPTIONS: RedisOptions = { enableAutoPipelining: true };
