import { loadConfig } from '@icepack/runtime';
import { describe, expect, it } from 'vitest';
import { configSchema } from './config.ts';

const required = {
  ICEPACK_KAFKA_BROKERS: '127.0.0.1:9092',
  ICEPACK_REDIS_URL: 'redis://127.0.0.1',
};

describe('dispatcher config', () => {
  it('keeps finished SparkApplications a day unless told otherwise', () => {
    expect(loadConfig(configSchema, required).ICEPACK_SPARK_APP_TTL).toBe(86_400_000);
    expect(
      loadConfig(configSchema, { ...required, ICEPACK_SPARK_APP_TTL: '3d' }).ICEPACK_SPARK_APP_TTL,
    ).toBe(3 * 86_400_000);
  });

  it('refuses an application TTL under an hour, naming the variable and why', () => {
    expect(() => loadConfig(configSchema, { ...required, ICEPACK_SPARK_APP_TTL: '10m' })).toThrow(
      /ICEPACK_SPARK_APP_TTL: must be at least 1h: a shorter TTL can run a task twice/,
    );
    expect(() => loadConfig(configSchema, { ...required, ICEPACK_SPARK_APP_TTL: 'soon' })).toThrow(
      /ICEPACK_SPARK_APP_TTL: /,
    );
  });

  it('launches at most 8 tasks at once per process unless told otherwise; refuses 0 by name', () => {
    expect(loadConfig(configSchema, required).ICEPACK_DISPATCHER_MAX_LAUNCHES).toBe(8);
    expect(
      loadConfig(configSchema, { ...required, ICEPACK_DISPATCHER_MAX_LAUNCHES: '20' })
        .ICEPACK_DISPATCHER_MAX_LAUNCHES,
    ).toBe(20);
    for (const bad of ['0', '2.5', 'many'])
      expect(() =>
        loadConfig(configSchema, { ...required, ICEPACK_DISPATCHER_MAX_LAUNCHES: bad }),
      ).toThrow(/ICEPACK_DISPATCHER_MAX_LAUNCHES: /);
  });

  it('batches up to 20 tasks unless told otherwise; refuses a bound outside 2–100 by name', () => {
    const config = loadConfig(configSchema, required);
    expect(config.ICEPACK_DISPATCHER_BATCH).toBe(true);
    expect(config.ICEPACK_DISPATCHER_BATCH_MAX_TASKS).toBe(20);
    expect(
      loadConfig(configSchema, { ...required, ICEPACK_DISPATCHER_BATCH: 'false' })
        .ICEPACK_DISPATCHER_BATCH,
    ).toBe(false);
    for (const bad of ['1', '101', 'many'])
      expect(() =>
        loadConfig(configSchema, { ...required, ICEPACK_DISPATCHER_BATCH_MAX_TASKS: bad }),
      ).toThrow(/ICEPACK_DISPATCHER_BATCH_MAX_TASKS: /);
  });

  it('keeps resident sessions off unless an idle bound is set; refuses bad values by name', () => {
    const config = loadConfig(configSchema, required);
    expect(config.ICEPACK_DISPATCHER_SESSION_IDLE_SECONDS).toBe(0);
    expect(config.ICEPACK_DISPATCHER_SESSION_MAX_TASKS).toBe(100);
    expect(
      loadConfig(configSchema, { ...required, ICEPACK_DISPATCHER_SESSION_IDLE_SECONDS: '60' })
        .ICEPACK_DISPATCHER_SESSION_IDLE_SECONDS,
    ).toBe(60);
    for (const bad of ['-1', '1.5', 'soon', '3601'])
      expect(() =>
        loadConfig(configSchema, { ...required, ICEPACK_DISPATCHER_SESSION_IDLE_SECONDS: bad }),
      ).toThrow(/ICEPACK_DISPATCHER_SESSION_IDLE_SECONDS: /);
    for (const bad of ['0', 'many'])
      expect(() =>
        loadConfig(configSchema, { ...required, ICEPACK_DISPATCHER_SESSION_MAX_TASKS: bad }),
      ).toThrow(/ICEPACK_DISPATCHER_SESSION_MAX_TASKS: /);
  });

  it('takes extra job environment names, refusing the job credential by name', () => {
    expect(
      loadConfig(configSchema, { ...required, ICEPACK_LOCAL_JOB_ENV: 'MY_CA, KRB5_CONFIG' })
        .ICEPACK_LOCAL_JOB_ENV,
    ).toEqual(['MY_CA', 'KRB5_CONFIG']);
    expect(() =>
      loadConfig(configSchema, { ...required, ICEPACK_LOCAL_JOB_ENV: 'ICEPACK_CATALOG_TOKEN' }),
    ).toThrow(/ICEPACK_LOCAL_JOB_ENV: .*ICEPACK_CATALOG_TOKEN is the job's catalog credential/);
  });
});
