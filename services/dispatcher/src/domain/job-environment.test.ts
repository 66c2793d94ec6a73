import { describe, expect, it } from 'vitest';
import { extraJobEnvNames, localJobEnvironment } from './job-environment.ts';

const dispatcher = {
  PATH: '/usr/bin',
  HOME: '/home/icepack',
  JAVA_HOME: '/usr/lib/jvm/java-17',
  LC_ALL: 'C.UTF-8',
  SPARK_LOCAL_DIRS: '/tmp/spark',
  AWS_ACCESS_KEY_ID: 'AKIA-object-store',
  AWS_SECRET_ACCESS_KEY: 'object-store-secret',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
  ICEPACK_SPARK_LOG_LEVEL: 'INFO',
  // The dispatcher's own secrets and settings: never a job's.
  ICEPACK_REDIS_PASSWORD: 'redis-secret',
  ICEPACK_KAFKA_SASL_PASSWORD: 'kafka-secret',
  ICEPACK_API_TOKEN: 'api-token',
  ICEPACK_SECRET_SALES_TOKEN: 'another-catalogs-token',
  ICEPACK_REDIS_URL: 'redis://:redis-secret@redis:6379',
  // A catalog credential that happens to be in the dispatcher's environment.
  ICEPACK_CATALOG_TOKEN: 'someone-elses-token',
  KUBERNETES_SERVICE_HOST: '10.0.0.1',
  UNSET: undefined,
};

describe('the environment a local Spark job inherits', () => {
  it('keeps what runs Spark and reaches storage, and none of the dispatcher secrets', () => {
    const kept = [
      'PATH',
      'HOME',
      'JAVA_HOME',
      'LC_ALL',
      'SPARK_LOCAL_DIRS',
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'ICEPACK_SPARK_LOG_LEVEL',
    ] as const;
    expect(localJobEnvironment(dispatcher)).toEqual(
      Object.fromEntries(kept.map((name) => [name, dispatcher[name]])),
    );
  });

  it('adds the names an operator lists, but never a catalog credential', () => {
    const env = localJobEnvironment(dispatcher, ['KUBERNETES_SERVICE_HOST']);
    expect(env.KUBERNETES_SERVICE_HOST).toBe('10.0.0.1');
    expect(env.ICEPACK_CATALOG_TOKEN).toBeUndefined();
    expect(extraJobEnvNames(['KUBERNETES_SERVICE_HOST', 'MY_CA'])).toEqual({
      ok: true,
      names: ['KUBERNETES_SERVICE_HOST', 'MY_CA'],
    });
  });

  it('refuses extra names that are not names or that name the job credential', () => {
    expect(extraJobEnvNames(['ICEPACK_CATALOG_CREDENTIAL'])).toEqual({
      ok: false,
      problem: expect.stringContaining('ICEPACK_CATALOG_CREDENTIAL') as unknown,
    });
    expect(extraJobEnvNames(['A=B'])).toEqual({
      ok: false,
      problem: expect.stringContaining('"A=B" is not a variable name') as unknown,
    });
  });
});
