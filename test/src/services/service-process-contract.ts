import { ServiceProcess } from '@icepack/runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';

export interface ServiceProcessContractOptions {
  /** The service's `main.ts`. */
  readonly entry: string;
  /** Its environment against the real Kafka and Redis of the local stack. */
  readonly env: Readonly<Record<string, string>>;
  /** A path under `/v1` that needs `env.ICEPACK_API_TOKEN`, for services with an API. */
  readonly apiPath?: string;
}

/**
 * What every Icepack service process promises operators, as one suite each service runs on
 * its own `main.ts`: ready against real Kafka and Redis, exit 0 on SIGTERM with a clean
 * drain, `/readyz` 503 naming the dependency that is down (while `/healthz` stays 200, so
 * Kubernetes does not restart a pod that only waits), and the API closed without the token.
 */
export function describeServiceProcess(name: string, options: ServiceProcessContractOptions): void {
  const { entry, env, apiPath } = options;
  let service: ServiceProcess | undefined;
  afterEach(async () => {
    await service?.stop('SIGKILL');
    service = undefined;
  });

  describe(`${name} process`, () => {
    it('becomes ready against the real Kafka and Redis and exits 0 on SIGTERM', async () => {
      service = await ServiceProcess.start({ entry, env });
      const ready = await service.waitForReadyz((r) => r.status === 200);
      expect(ready.body.checks).toMatchObject({ kafka: { ok: true }, redis: { ok: true } });
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
      if (apiPath !== undefined) {
        // The API needs the token; probes do not.
        expect((await fetch(`${service.url}${apiPath}`)).status).toBe(401);
        const authorized = await fetch(`${service.url}${apiPath}`, {
          headers: { authorization: `Bearer ${env.ICEPACK_API_TOKEN ?? ''}` },
        });
        expect(authorized.status).not.toBe(401);
      }

      expect(await service.stop('SIGTERM')).toBe(0);
      expect(service.lines.find((line) => line.msg === 'shutdown finished')).toMatchObject({
        clean: true,
      });
    });

    it('answers /readyz 503 naming redis while Redis is unreachable, and still stops cleanly', async () => {
      service = await ServiceProcess.start({
        entry,
        env: { ...env, ICEPACK_REDIS_URL: 'redis://127.0.0.1:1' },
      });
      const notReady = await service.waitForReadyz(
        (r) => r.status === 503 && r.body.checks.kafka?.ok === true,
      );
      expect(notReady.body.failing).toEqual(['redis']);
      expect(notReady.body.checks.redis?.detail).toMatch(/ECONNREFUSED|connect|reconnecting/);
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
      expect(await service.stop('SIGTERM')).toBe(0);
    });

    it('stays up and not ready while Kafka is unreachable, and a SIGTERM during start-up exits 0', async () => {
      service = await ServiceProcess.start({
        entry,
        env: { ...env, ICEPACK_KAFKA_BROKERS: '127.0.0.1:1' },
      });
      const notReady = await service.waitForReadyz(
        (r) => r.status === 503 && r.body.checks.redis?.ok === true,
      );
      expect(notReady.body.failing).toEqual(['kafka']);
      expect(notReady.body.checks.kafka?.detail).toMatch(/brokers unreachable/);
      expect(await service.stop('SIGTERM')).toBe(0);
      expect(service.lines.some((line) => line.level === 'fatal')).toBe(false);
    });
  });
}
