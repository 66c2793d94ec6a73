import { Router } from 'express';
import type { ErrorRequestHandler } from 'express';
import type { CatalogService } from '../app/catalog-service.ts';
import type { GroupService } from '../app/group-service.ts';
import type { Reconciler } from '../app/reconciler.ts';
import {
  CapacityError,
  ConflictError,
  NotFoundError,
  UnavailableError,
  UnprocessableError,
} from '../domain/errors.ts';
import { GroupPhase } from '../domain/group-record.ts';

export interface ApiDeps {
  readonly catalogs: CatalogService;
  readonly groups: GroupService;
  readonly reconciler: Reconciler;
}

/** Domain errors → 404/409/422/503; validation errors go on to the runtime's handler (400 naming fields). */
const domainErrors: ErrorRequestHandler = (error, _req, res, next) => {
  if (error instanceof CapacityError) {
    res
      .status(422)
      .json({ error: 'insufficient_capacity', message: error.message, ...error.figures });
  } else if (error instanceof UnprocessableError) {
    res.status(422).json({ error: 'unprocessable', message: error.message });
  } else if (error instanceof NotFoundError) {
    res.status(404).json({ error: 'not_found', message: error.message });
  } else if (error instanceof ConflictError) {
    res.status(409).json({ error: 'conflict', message: error.message });
  } else if (error instanceof UnavailableError) {
    res.status(503).json({ error: 'unavailable', message: error.message });
  } else next(error);
};

/** The `/v1` routes (mounted behind the bearer-token check). */
export function apiRouter({ catalogs, groups, reconciler }: ApiDeps): Router {
  const router = Router();

  router.get('/catalogs', async (_req, res) => {
    res.json(await catalogs.list());
  });
  router.post('/catalogs', async (req, res) => {
    res.status(201).json(await catalogs.create(req.body));
  });
  router.get('/catalogs/:name', async (req, res) => {
    res.json(await catalogs.get(req.params.name));
  });
  router.put('/catalogs/:name', async (req, res) => {
    res.json(await catalogs.update(req.params.name, req.body));
  });
  router.delete('/catalogs/:name', async (req, res) => {
    await catalogs.delete(req.params.name);
    res.status(204).end();
  });

  router.get('/resource-groups', async (_req, res) => {
    res.json(await groups.list());
  });
  router.post('/resource-groups', async (req, res) => {
    const view = await groups.create(req.body);
    res.status(view.status.phase === GroupPhase.ready ? 201 : 202).json(view);
  });
  router.get('/resource-groups/:name', async (req, res) => {
    res.json(await groups.get(req.params.name));
  });
  router.delete('/resource-groups/:name', async (req, res) => {
    const view = await groups.delete(req.params.name);
    reconciler.follow(req.params.name);
    res.status(202).json(view);
  });

  router.use(domainErrors);
  return router;
}
