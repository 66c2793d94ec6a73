import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '@icepack/types';
import { z } from 'zod';
import { createLogger } from '../logger/create-logger.ts';
import { requireBearerToken } from './bearer-token.ts';
import { createHttpServer } from './create-http-server.ts';
import type { HttpServer } from './create-http-server.ts';
import { HttpError } from './http-errors.ts';

const logger = createLogger({
  service: 'test',
  destination: new Writable({ write: (_c, _e, cb) => cb() }),
});

let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(build: (s: HttpServer) => void = () => {}, readiness = true) {
  server = createHttpServer({
    port: 0,
    host: '127.0.0.1',
    logger,
    readiness: [
      { name: 'kafka', check: () => ({ ok: true }) },
      {
        name: 'redis',
        check: () => ({ ok: readiness, detail: readiness ? undefined : 'ECONNREFUSED' }),
      },
    ],
    metrics: { handle: (_req, res) => res.end('# metrics\n') },
  });
  build(server);
  await server.listen();
  return `http://127.0.0.1:${server.port}`;
}

describe('createHttpServer', () => {
  it('answers /healthz, /readyz with every check, and /metrics', async () => {
    const base = await start();
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ready',
      checks: { kafka: { ok: true }, redis: { ok: true } },
    });
    expect(await (await fetch(`${base}/metrics`)).text()).toBe('# metrics\n');
  });

  it('answers /readyz with 503 naming the failing check', async () => {
    const base = await start(undefined, false);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({
      status: 'not ready',
      failing: ['redis'],
      checks: { redis: { ok: false, detail: 'ECONNREFUSED' } },
    });
  });

  it('turns validation errors into 400 with field names, and hides internal errors', async () => {
    const base = await start(({ app }) => {
      app.post('/zod', (req) => {
        z.object({ name: z.string(), spark: z.object({ cores: z.number() }) }).parse(req.body);
      });
      app.post('/ours', () => {
        throw new ValidationError('resource group', [
          { path: 'cpu', message: 'exceeds capacity', code: 'custom' },
        ]);
      });
      app.get('/gone', () => {
        throw new HttpError(404, 'no such catalog: x');
      });
      app.get('/boom', () => {
        throw new Error('secret internals at /srv/app.ts:12');
      });
    });
    const post = (path: string, body: string) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });

    const zod = await post('/zod', JSON.stringify({ name: 'a', spark: { cores: 'x' } }));
    expect(zod.status).toBe(400);
    expect(await zod.json()).toMatchObject({ fields: [{ path: 'spark.cores' }] });

    const ours = await post('/ours', '{}');
    expect(await ours.json()).toMatchObject({
      fields: [{ path: 'cpu', message: 'exceeds capacity' }],
    });

    const badJson = await post('/zod', '{not json');
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toMatchObject({ error: 'invalid_json' });

    const gone = await fetch(`${base}/gone`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ message: 'no such catalog: x' });

    const boom = await fetch(`${base}/boom`);
    expect(boom.status).toBe(500);
    expect(await boom.text()).not.toMatch(/secret internals|\.ts:/);

    expect((await fetch(`${base}/nowhere`)).status).toBe(404);
  });
});

describe('requireBearerToken', () => {
  it('lets the right token through and rejects a missing or wrong one with 401', async () => {
    const base = await start(({ app }) => {
      app.get('/v1/x', requireBearerToken('s3cret-token'), (_req, res) => {
        res.json({ ok: true });
      });
    });
    const get = (authorization?: string) =>
      fetch(`${base}/v1/x`, { headers: authorization === undefined ? {} : { authorization } });
    expect((await get('Bearer s3cret-token')).status).toBe(200);
    expect((await get()).status).toBe(401);
    expect((await get('Bearer s3cret-tokeN')).status).toBe(401);
    expect((await get('Bearer s3cret')).status).toBe(401);
    expect((await get('Basic s3cret-token')).status).toBe(401);
    expect((await get()).headers.get('www-authenticate')).toMatch(/^Bearer/);
  });
});
