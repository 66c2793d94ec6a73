import { HttpError, type Logger } from '@icepack/runtime';
import {
  InvalidTableKeyError,
  parseTableKey,
  queueNameForCatalog,
  tableKey,
  TaskType,
  type QuotaUse,
  type Task,
  type TableId,
} from '@icepack/types';
import { Router, type Request, type Response } from 'express';
import type { ConsoleStore, PauseScope } from '../adapters/console-store.ts';
import type { LedgerStore } from '../adapters/ledger-store.ts';
import type { QuotaUseReader } from '../adapters/quota-use-reader.ts';
import type { Planner } from '../adapters/planner.ts';
import type { TableStateStore } from '../adapters/state-store.ts';
import type { TaskEventSink } from '../adapters/task-event-sink.ts';
import type { TaskQueue } from '../adapters/task-queue.ts';
import { ledgerReport, parseLedgerQuery } from '../domain/ledger.ts';
import { isRunNow } from '../domain/score.ts';
import { overviewPage, parseOverviewQuery, summarize } from '../domain/table-overview.ts';
import { consoleAuth } from './console-auth.ts';
import type { TableSummaries } from './table-summaries.ts';

export interface ConsoleRouterOptions {
  readonly planner: Pick<Planner, 'explain' | 'reconsider' | 'reconsiderCatalog'>;
  readonly states: Pick<TableStateStore, 'getValidated' | 'catalogs'>;
  readonly queue: Pick<
    TaskQueue,
    'waiting' | 'queue' | 'removeWaiting' | 'runNow' | 'runLocations'
  >;
  readonly store: ConsoleStore;
  readonly summaries: TableSummaries;
  readonly ledger?: Pick<LedgerStore, 'range' | 'bounds'>;
  /** The resource groups' quota use, as the dispatchers publish it. Default none shown. */
  readonly quotaUse?: Pick<QuotaUseReader, 'read'>;
  /** Where a cancelled task's `cancelled` event goes. */
  readonly events: TaskEventSink;
  readonly token: string;
  /** See `consoleAuth`; off by default. */
  readonly trustedUserHeader?: string;
  readonly logger: Logger;
  /** Default `() => new Date()`. */
  readonly clock?: () => Date;
}

const LISTED = 200;

const tasks = (n: number): string => `${n} waiting task${n === 1 ? '' : 's'}`;
const TABLE_LEDGER_WINDOW_MS = 30 * 86_400_000;

function tableParam(req: Request): TableId {
  try {
    return parseTableKey(String(req.params.table));
  } catch (error) {
    if (error instanceof InvalidTableKeyError) throw new HttpError(400, `table: ${error.message}`);
    throw error;
  }
}

/**
 * The console's JSON API, mounted at `/console/api` (ADR 0020). Reads: `GET /me`,
 * `/overview`, `/tables/{table}`, `/catalogs/{catalog}/queue`, `/audit`. Actions (each
 * written to the audit log): `POST /tables/{table}/pause|resume`,
 * `POST /catalogs/{catalog}/pause|resume`, `POST /tables/{table}/tasks/{type}/cancel` and `…/run-now`.
 */
export function consoleRouter(options: ConsoleRouterOptions): Router {
  const router = Router();
  const clock = options.clock ?? (() => new Date());
  const { store, states, queue } = options;
  router.use(
    consoleAuth({
      token: options.token,
      ...(options.trustedUserHeader === undefined
        ? {}
        : { trustedUserHeader: options.trustedUserHeader }),
    }),
  );

  router.get('/me', (_req, res) => {
    res.json({ user: res.locals.user as string });
  });

  router.get('/overview', async (req, res) => {
    const query = parseOverviewQuery(req.query);
    const [all, catalogs, pauses] = await Promise.all([
      options.summaries.all(),
      states.catalogs(),
      store.allPauses(),
    ]);
    const counts = Map.groupBy(all, (s) => s.catalog);
    const page = overviewPage(all, query);
    const sorted = catalogs.toSorted();
    const quotas = (await options.quotaUse?.read(sorted)) ?? new Map<string, QuotaUse>();
    res.json({
      catalogs: await Promise.all(
        sorted.map(async (name) => {
          const jobs = await queue.queue(name).getJobCounts('prioritized', 'delayed', 'active');
          return {
            name,
            tables: counts.get(name)?.length ?? 0,
            waiting: (jobs.prioritized ?? 0) + (jobs.delayed ?? 0),
            running: jobs.active ?? 0,
            paused: pauses.get(`catalog:${name}`) ?? null,
            quota: quotas.get(name) ?? null,
          };
        }),
      ),
      ...page,
      rows: page.rows.map((r) => ({
        ...r,
        paused: pauses.get(`table:${r.tableKey}`) ?? pauses.get(`catalog:${r.catalog}`) ?? null,
      })),
    });
  });

  router.get('/tables/:table', async (req, res) => {
    const id = tableParam(req);
    const key = tableKey(id);
    const state = await states.getValidated(key);
    if (state === undefined) {
      res
        .status(404)
        .json({ error: 'not-found', message: `the planner has seen no state of table ${key}` });
      return;
    }
    const now = clock().getTime();
    const [explanation, pauses, stored] = await Promise.all([
      options.planner.explain(key),
      store.pausesOf(id),
      options.ledger?.range(id.catalog, now - TABLE_LEDGER_WINDOW_MS, now) ?? Promise.resolve([]),
    ]);
    const ledger =
      options.ledger === undefined
        ? null
        : ledgerReport(
            parseLedgerQuery(
              {
                catalog: id.catalog,
                table: key,
                since: new Date(now - TABLE_LEDGER_WINDOW_MS).toISOString(),
                until: new Date(now).toISOString(),
              },
              now,
            ),
            stored,
            now,
            options.ledger.bounds,
          );
    res.json({
      summary: summarize(state),
      partitions: state.partitions,
      sizeHistogram: state.sizeHistogram,
      consolePause: pauses.table ?? null,
      catalogPause: pauses.catalog ?? null,
      explanation,
      ledger,
    });
  });

  router.get('/catalogs/:catalog/queue', async (req, res) => {
    const catalog = String(req.params.catalog);
    if (!(await states.catalogs()).includes(catalog)) {
      res.status(404).json({
        error: 'not-found',
        message: `the planner has seen no table of catalog ${catalog}`,
      });
      return;
    }
    const now = clock().getTime();
    const [waiting, active, failures] = await Promise.all([
      queue.waiting(catalog, LISTED),
      queue.queue(catalog).getActive(0, LISTED - 1),
      store.failures(catalog),
    ]);
    const locations = await queue.runLocations(
      catalog,
      active.map((job) => (job.data as Task).id),
    );
    res.json({
      catalog,
      queue: queueNameForCatalog(catalog),
      waiting: waiting.map((w) => ({
        position: w.position,
        id: w.task.id,
        type: w.task.type,
        tableKey: tableKey(w.task.table),
        state: w.state,
        priority: w.priority,
        score: w.task.score,
        runNow: isRunNow(w.task.score),
        createdAt: w.task.createdAt,
        waitingMs: Math.max(0, now - Date.parse(w.task.createdAt)),
      })),
      running: active.map((job, i) => {
        const task = job.data as Task;
        return {
          id: task.id,
          type: task.type,
          tableKey: tableKey(task.table),
          startedAt: job.processedOn === undefined ? null : new Date(job.processedOn).toISOString(),
          attempt: job.attemptsMade + 1,
          // Where its run is and where its logs are (the dispatcher records it when it starts).
          run: locations[i] ?? null,
        };
      }),
      failures,
    });
  });

  router.get('/audit', async (req, res) => {
    const raw = typeof req.query.limit === 'string' ? req.query.limit : '100';
    const limit = Number(raw);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new HttpError(400, 'limit: expected a whole number from 1 to 1000');
    res.json({ entries: await store.auditLog(limit) });
  });

  async function act(
    res: Response,
    action: string,
    target: string,
    run: () => Promise<{ changed: boolean; outcome: string }>,
  ): Promise<void> {
    const user = res.locals.user as string;
    const at = clock().toISOString();
    const { changed, outcome } = await run();
    await store.audit({ at, user, action, target, outcome });
    options.summaries.invalidate();
    options.logger.info({ user, action, target, outcome }, 'console action');
    res.json({ action, target, changed, outcome, at, by: user });
  }

  for (const scope of ['table', 'catalog'] as const satisfies readonly PauseScope[]) {
    const path = scope === 'table' ? '/tables/:table' : '/catalogs/:catalog';
    const name = async (req: Request): Promise<string> => {
      if (scope === 'table') return tableKey(tableParam(req));
      const catalog = String(req.params.catalog);
      if (!(await states.catalogs()).includes(catalog))
        throw new HttpError(404, `the planner has seen no table of catalog ${catalog}`);
      return catalog;
    };
    // A pause removes the waiting tasks at once, a resume re-plans from the stored state
    // (ADR 0024): both are the planner's own decision with the console's pause layer.
    const reconsider = async (target: string): Promise<number> =>
      scope === 'table'
        ? (await options.planner.reconsider(target)).actions.length
        : options.planner.reconsiderCatalog(target);
    router.post(`${path}/pause`, async (req, res) => {
      const target = await name(req);
      await act(res, `pause ${scope}`, target, async () => {
        const changed = await store.pause(scope, target, {
          by: res.locals.user as string,
          at: clock().toISOString(),
        });
        // Also when it was paused already: a retry completes a removal a failure cut short.
        const removed = await reconsider(target);
        const outcome = changed ? 'paused' : 'already paused';
        return { changed, outcome: `${outcome}; ${tasks(removed)} removed` };
      });
    });
    router.post(`${path}/resume`, async (req, res) => {
      const target = await name(req);
      await act(res, `resume ${scope}`, target, async () => {
        const changed = await store.resume(scope, target);
        if (!changed) return { changed, outcome: 'was not paused' };
        return { changed, outcome: `resumed; ${tasks(await reconsider(target))} planned` };
      });
    });
  }

  const typeParam = (req: Request): TaskType => {
    const type = String(req.params.type);
    if (!(Object.values(TaskType) as string[]).includes(type))
      throw new HttpError(400, `type: expected one of ${Object.values(TaskType).join(', ')}`);
    return type as TaskType;
  };

  router.post('/tables/:table/tasks/:type/run-now', async (req, res) => {
    const id = tableParam(req);
    const type = typeParam(req);
    await act(res, `run now ${type}`, tableKey(id), async () => {
      const { outcome, task } = await queue.runNow(id, type);
      if (outcome === 'raised') {
        await options.events.publish({
          taskId: task!.id,
          table: id,
          taskType: type,
          status: 'updated',
          at: clock().toISOString(),
          reason: `run now: raised to the front of the queue from the console by ${res.locals.user as string}`,
        });
      }
      return {
        changed: outcome === 'raised',
        outcome:
          outcome === 'raised'
            ? 'raised to the front of the queue'
            : outcome === 'already'
              ? 'already at the front'
              : 'no waiting task',
      };
    });
  });

  router.post('/tables/:table/tasks/:type/cancel', async (req, res) => {
    const id = tableParam(req);
    const type = typeParam(req);
    await act(res, `cancel ${type}`, tableKey(id), async () => {
      const changed = await queue.removeWaiting(id, type);
      if (changed) {
        await options.events.publish({
          taskId: `${type}/${tableKey(id)}`,
          table: id,
          taskType: type,
          status: 'cancelled',
          at: clock().toISOString(),
          reason: `cancelled from the console by ${res.locals.user as string}`,
        });
      }
      return { changed, outcome: changed ? 'cancelled' : 'no waiting task' };
    });
  });

  return router;
}
