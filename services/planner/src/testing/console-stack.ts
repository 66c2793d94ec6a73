// A planner HTTP server with the console mounted, on real Redis with private keys: the
// console's contract test and its browser test share it.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createHttpServer, createLogger, type HttpServer } from '@icepack/runtime';
import { Redis } from 'ioredis';
import { ConsoleStore } from '../adapters/console-store.ts';
import { LedgerStore } from '../adapters/ledger-store.ts';
import { PausablePlanner, pausedPolicy } from '../adapters/pausable-planner.ts';
import { Planner } from '../adapters/planner.ts';
import { TableStateStore } from '../adapters/state-store.ts';
import { InMemoryTaskEventSink } from '../adapters/task-event-sink.ts';
import { TaskQueue } from '../adapters/task-queue.ts';
import { mountConsole } from '../console/mount-console.ts';
import { TableSummaries } from '../console/table-summaries.ts';
import { DEFAULT_LEDGER_BOUNDS } from '../domain/ledger.ts';

export interface ConsoleStack {
  readonly url: string;
  readonly token: string;
  readonly redis: Redis;
  readonly planner: PausablePlanner;
  readonly queue: TaskQueue;
  readonly states: TableStateStore;
  readonly store: ConsoleStore;
  readonly ledger: LedgerStore;
  readonly events: InMemoryTaskEventSink;
  close(catalogs: readonly string[]): Promise<void>;
}

export async function startConsoleStack(
  redisUrl: string,
  options: { trustedUserHeader?: string } = {},
): Promise<ConsoleStack> {
  const id = randomUUID().slice(0, 8);
  const token = `console-token-${randomUUID()}`;
  const logger = createLogger({
    service: 'console-test',
    level: 'warn',
    destination: new Writable({ write: (_c, _e, cb) => cb() }),
  });
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new TaskQueue({ connection: redis });
  const states = new TableStateStore({
    connection: redis,
    statesKey: `test:console-${id}:states`,
    catalogsKey: `test:console-${id}:catalogs`,
  });
  const store = new ConsoleStore({ connection: redis, prefix: `test:console-${id}` });
  const ledger = new LedgerStore({
    connection: redis,
    prefix: `test:console-${id}:ledger`,
    bounds: DEFAULT_LEDGER_BOUNDS,
  });
  const events = new InMemoryTaskEventSink();
  const base = { queue, states, events, logger };
  const planner = new PausablePlanner({
    planner: new Planner(base),
    paused: new Planner({ ...base, catalogPolicy: pausedPolicy(() => undefined) }),
    pauses: store,
  });
  const http: HttpServer = createHttpServer({ port: 0, host: '127.0.0.1', logger });
  await mountConsole(http, {
    planner,
    states,
    queue,
    store,
    // Every request reads the states afresh: the tests change them between requests.
    summaries: new TableSummaries({ states, maxAgeMs: 0 }),
    ledger,
    events,
    token,
    trustedUserHeader: options.trustedUserHeader,
    logger,
  });
  await http.listen();
  return {
    url: `http://127.0.0.1:${http.port}`,
    token,
    redis,
    planner,
    queue,
    states,
    store,
    ledger,
    events,
    close: async (catalogs) => {
      await http.close();
      for (const c of catalogs) await queue.queue(c).obliterate({ force: true });
      await queue.close();
      await states.clear();
      await store.clear(catalogs);
      await redis.del(...catalogs.map((c) => `test:console-${id}:ledger:${c}`));
      await redis.quit();
    },
  };
}
