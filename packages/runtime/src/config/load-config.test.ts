import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tempDir } from '../testing/temp-dir.ts';
import { baseConfigSchema } from './base-config.ts';
import { ConfigError } from './config-error.ts';
import { parseDuration } from './duration.ts';
import { loadConfig } from './load-config.ts';
import { redactConfig } from './redact-config.ts';
import { secret } from './secret.ts';

const minimal = {
  ICEPACK_KAFKA_BROKERS: 'kafka-0:9092, kafka-1:9092',
  ICEPACK_REDIS_URL: 'redis://:hunter2@redis:6379/0',
};

function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies defaults and parses lists, ports, flags and durations', () => {
    const config = loadConfig(baseConfigSchema('planner'), {
      ...minimal,
      ICEPACK_HTTP_PORT: '0',
      ICEPACK_PROMETHEUS: 'on',
      ICEPACK_SHUTDOWN_TIMEOUT: '5m',
    });
    expect(config).toMatchObject({
      ICEPACK_SERVICE_NAME: 'planner',
      ICEPACK_LOG_LEVEL: 'info',
      ICEPACK_HTTP_PORT: 0,
      ICEPACK_KAFKA_BROKERS: ['kafka-0:9092', 'kafka-1:9092'],
      ICEPACK_PROMETHEUS: true,
      ICEPACK_SHUTDOWN_TIMEOUT: 300_000,
    });
    expect(config.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
  });

  it('names every bad or missing variable in one error', () => {
    const problems = problemsOf(() =>
      loadConfig(baseConfigSchema('planner'), {
        ICEPACK_KAFKA_BROKERS: 'kafka-0',
        ICEPACK_HTTP_PORT: '70000',
        ICEPACK_LOG_LEVEL: 'loud',
      }),
    );
    expect(problems.join('\n')).toMatch(/^ICEPACK_KAFKA_BROKERS: expected host:port/m);
    expect(problems.join('\n')).toMatch(/^ICEPACK_HTTP_PORT: expected a port number/m);
    expect(problems.join('\n')).toMatch(/^ICEPACK_LOG_LEVEL: /m);
    expect(problems.join('\n')).toMatch(/^ICEPACK_REDIS_URL: required, not set/m);
  });

  it('treats an empty variable as unset', () => {
    const config = loadConfig(baseConfigSchema('x'), { ...minimal, ICEPACK_LOG_LEVEL: '' });
    expect(config.ICEPACK_LOG_LEVEL).toBe('info');
  });

  it('reads a secret from NAME_FILE without its trailing newline', () => {
    const dir = tempDir('icepack-config-');
    const file = join(dir, 'redis-url');
    writeFileSync(file, 'redis://:from-file@redis:6379\n');
    const config = loadConfig(baseConfigSchema('x'), {
      ICEPACK_KAFKA_BROKERS: 'k:9092',
      ICEPACK_REDIS_URL_FILE: file,
    });
    expect(config.ICEPACK_REDIS_URL).toBe('redis://:from-file@redis:6379');
  });

  it('refuses both NAME and NAME_FILE, and an unreadable file, naming the variable', () => {
    expect(
      problemsOf(() =>
        loadConfig(baseConfigSchema('x'), { ...minimal, ICEPACK_REDIS_URL_FILE: '/nonexistent' }),
      ),
    ).toEqual([
      'ICEPACK_REDIS_URL: set either ICEPACK_REDIS_URL or ICEPACK_REDIS_URL_FILE, not both',
    ]);
    expect(
      problemsOf(() =>
        loadConfig(baseConfigSchema('x'), {
          ICEPACK_KAFKA_BROKERS: 'k:9092',
          ICEPACK_REDIS_URL_FILE: '/nonexistent/redis-url',
        }),
      )[0],
    ).toMatch(/^ICEPACK_REDIS_URL_FILE: cannot read \/nonexistent\/redis-url/);
  });

  it('ignores NAME_FILE for variables that are not secret', () => {
    const schema = z.object({ PLAIN: z.string().default('d') });
    expect(loadConfig(schema, { PLAIN_FILE: '/etc/hostname' }).PLAIN).toBe('d');
  });

  it('does not echo a bad secret value in the error', () => {
    const schema = z.object({ TOKEN: secret(z.string().min(40)) });
    const problems = problemsOf(() => loadConfig(schema, { TOKEN: 'short-but-secret' }));
    expect(problems.join()).toMatch(/^TOKEN: invalid value/);
    expect(problems.join()).not.toContain('short-but-secret');
  });
});

describe('redactConfig', () => {
  it('masks secrets and keeps the host of a secret URL', () => {
    const schema = baseConfigSchema('x').extend({ ICEPACK_API_TOKEN: secret(z.string()) });
    const config = loadConfig(schema, { ...minimal, ICEPACK_API_TOKEN: 's3cr3t' });
    const redacted = redactConfig(config);
    expect(redacted.ICEPACK_REDIS_URL).toBe('redis://[redacted]@redis:6379');
    expect(redacted.ICEPACK_API_TOKEN).toBe('[redacted]');
    expect(redacted.ICEPACK_KAFKA_BROKERS).toEqual(['kafka-0:9092', 'kafka-1:9092']);
    expect(JSON.stringify(redacted)).not.toMatch(/hunter2|s3cr3t/);
  });
});

describe('parseDuration', () => {
  it.each([
    ['100ms', 100],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['2d', 172_800_000],
    ['1.5s', 1_500],
    ['250', 250],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('rejects text that is not a duration', () => {
    expect(() => parseDuration('soon')).toThrow(/expected a duration/);
    expect(() => parseDuration('5 minutes')).toThrow(/expected a duration/);
  });
});
