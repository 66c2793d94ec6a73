import { resolve } from 'node:path';
import { ServiceProcess } from '@icepack/runtime/testing';
import { afterEach, describe, expect, inject, it } from 'vitest';

const infra = inject('infra');
const entry = resolve(import.meta.dirname, 'main.ts');
const env = {
  ICEPACK_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
  ICEPACK_REDIS_URL: infra.redisUrl,
  ICEPACK_LOG_LEVEL: 'info',
  ICEPACK_API_TOKEN: 'test-token-0123456789abcdef',
  // No Kubernetes here: local mode keeps /readyz about Kafka and Redis only.
  ICEPACK_PROVISIONER_MODE: 'local',
  ICEPACK_PROVISIONER_KEY_PREFIX: `icepack-test:main-${process.pid}`,
};

let service: ServiceProcess | undefined;
afterEach(async () => {
  await service?.stop('SIGKILL');
  service = undefined;
});

describe('provisioner process', () => {
  it('becomes ready against the real Kafka and Redis and exits 0 on SIGTERM', async () => {
    service = await ServiceProcess.start({ entry, env });
    const ready = await service.waitForReadyz((r) => r.status === 200);
    expect(ready.body.checks).toMatchObject({ kafka: { ok: true }, redis: { ok: true } });
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    // The API needs the token; probes do not.
    expect((await fetch(`${service.url}/v1/catalogs`)).status).toBe(401);
    const authorized = await fetch(`${service.url}/v1/catalogs`, {
      headers: { authorization: `Bearer ${env.ICEPACK_API_TOKEN}` },
    });
    expect(authorized.status).not.toBe(401);

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
