import type { Bindings, Logger } from 'pino';

/**
 * `parent.child(bindings)`, made the first time the logger is used. A pino child serialises
 * and redacts its bindings when it is made: the consumer gives every message a logger (two,
 * with the handler's), most of which never write a line, and making them eagerly was ~26 µs
 * a message, ~4 % of a planner replica's CPU (issue 17,
 * bench/results/planner-replica-cpu-2026-12-04.md). The
 * lines it writes are the child's: same bindings, level and redaction.
 */
export function lazyChild(parent: Logger, bindings: Bindings): Logger {
  let child: Logger | undefined;
  const real = (): Logger => (child ??= parent.child(bindings));
  return new Proxy({} as Logger, {
    get(_target, property) {
      const logger = real();
      const value: unknown = Reflect.get(logger, property, logger);
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(logger)
        : value;
    },
    set: (_target, property, value) => Reflect.set(real(), property, value),
    has: (_target, property) => Reflect.has(real(), property),
  });
}
