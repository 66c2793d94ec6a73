import { HttpError, requireBearerToken } from '@icepack/runtime';
import { InvalidTableKeyError, parseTableKey, queueNameForCatalog, tableKey } from '@icepack/types';
import { Router, type Response } from 'express';
import type { LedgerStore } from '../adapters/ledger-store.ts';
import type { Planner } from '../adapters/planner.ts';
import type { SizingModelReader } from '../adapters/sizing-model-reader.ts';
import { ledgerReport, parseLedgerQuery } from '../domain/ledger.ts';
import type { TaskQueue } from '../adapters/task-queue.ts';

export interface PlannerRouterOptions {
  readonly planner: Pick<Planner, 'explain'>;
  readonly queue: TaskQueue;
  /** Bearer token every route requires. */
  readonly token: string;
  /** The catalogs the planner has seen; another name is a 404 and opens no queue. */
  readonly catalogs: () => Promise<readonly string[]>;
  /** Most tasks `GET …/queue` lists. Default 1000. */
  readonly maxQueueListing?: number;
  /** The ledger of succeeded runs; without it `GET /v1/ledger` is not served. */
  readonly ledger?: Pick<LedgerStore, 'range' | 'bounds'>;
  /** The dispatchers' sizing models; without it `GET …/sizing` is not served. */
  readonly sizing?: Pick<SizingModelReader, 'read'>;
  /** Default `() => new Date()`. */
  readonly clock?: () => Date;
}

/**
 * Mount under `/v1`:
 * `GET /v1/tables/{table}/plan` — {table} is `tableKey` URL-encoded (`prod%2Fsales%2Forders`)
 * `GET /v1/catalogs/{catalog}/queue?limit=` — waiting tasks in run order with their scores
 * `GET /v1/ledger?catalog=&table=&since=&until=` — cost and benefit of succeeded runs
 * `GET /v1/catalogs/{catalog}/sizing` — the learned job-sizing model its dispatcher uses
 */
export function plannerRouter(options: PlannerRouterOptions): Router {
  const router = Router();
  const clock = options.clock ?? (() => new Date());
  const max = options.maxQueueListing ?? 1000;
  router.use(requireBearerToken(options.token));

  router.get('/tables/:table/plan', async (req, res) => {
    const key = req.params.table;
    try {
      parseTableKey(key);
    } catch (error) {
      if (error instanceof InvalidTableKeyError) {
        res.status(400).json({ error: 'bad-request', message: error.message, field: 'table' });
        return;
      }
      throw error;
    }
    const explanation = await options.planner.explain(key);
    if (explanation === undefined) {
      res
        .status(404)
        .json({ error: 'not-found', message: `the planner has seen no state of table ${key}` });
      return;
    }
    res.json(explanation);
  });

  router.get('/catalogs/:catalog/queue', async (req, res) => {
    const { catalog } = req.params;
    const limitText = typeof req.query.limit === 'string' ? req.query.limit : String(max);
    const limit = Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > max) {
      throw new HttpError(400, `limit: expected a whole number from 1 to ${max}`);
    }
    if (!(await knownCatalog(catalog, res))) return;
    const now = clock().getTime();
    const waiting = await options.queue.waiting(catalog, limit);
    res.json({
      catalog,
      queue: queueNameForCatalog(catalog),
      tasks: waiting.map((w) => ({
        position: w.position,
        id: w.task.id,
        type: w.task.type,
        table: w.task.table,
        tableKey: tableKey(w.task.table),
        state: w.state,
        priority: w.priority,
        createdAt: w.task.createdAt,
        waitingMs: Math.max(0, now - Date.parse(w.task.createdAt)),
        score: { total: w.task.score.total, parts: w.task.score.parts },
        parameters: w.task.parameters,
      })),
    });
  });
  const { ledger } = options;
  if (ledger !== undefined) {
    router.get('/ledger', async (req, res) => {
      const now = clock().getTime();
      const query = parseLedgerQuery(req.query, now);
      if (!(await knownCatalog(query.catalog, res))) return;
      const stored = await ledger.range(query.catalog, query.sinceMs, query.untilMs);
      res.json(ledgerReport(query, stored, now, ledger.bounds));
    });
  }
  const { sizing } = options;
  if (sizing !== undefined) {
    router.get('/catalogs/:catalog/sizing', async (req, res) => {
      const { catalog } = req.params;
      if (!(await knownCatalog(catalog, res))) return;
      const model = await sizing.read(catalog);
      if (model === undefined) {
        res.status(404).json({
          error: 'not-found',
          message: `no dispatcher publishes a sizing model for catalog ${catalog} (none serves it, or it has not fitted one yet)`,
        });
        return;
      }
      res.json(model);
    });
  }
  return router;

  /** False (after answering 404) for a catalog the planner has not seen. */
  async function knownCatalog(catalog: string, res: Response): Promise<boolean> {
    if ((await options.catalogs()).includes(catalog)) return true;
    res.status(404).json({
      error: 'not-found',
      message: `the planner has seen no table of catalog ${catalog}`,
    });
    return false;
  }
}
