import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseConfigSchema } from '../config/base-config.ts';
import { ConfigError } from '../config/config-error.ts';
import { loadConfig } from '../config/load-config.ts';
import { redisTransport } from '../redis/redis-transport.ts';
import { tempDir } from '../testing/temp-dir.ts';
import { kafkaTransport } from './kafka-transport.ts';

const files: Record<string, string> = {
  '/s/ca.pem': 'CA',
  '/s/cert.pem': 'CERT',
  '/s/key.pem': 'KEY',
  '/s/token': 'eyJtoken\n',
};
function read(path: string): string {
  const text = files[path];
  if (text === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
  return text;
}

const minimal = { ICEPACK_KAFKA_BROKERS: 'kafka:9093', ICEPACK_REDIS_URL: 'redis://redis:6379' };
const config = (env: Record<string, string>) =>
  loadConfig(baseConfigSchema('planner'), { ...minimal, ...env });

function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('kafkaTransport', () => {
  it('is plaintext without authentication by default', () => {
    expect(kafkaTransport(config({}), read)).toEqual({});
  });

  it('builds SCRAM-SHA-512 over TLS with a CA bundle and a client certificate', () => {
    const transport = kafkaTransport(
      config({
        ICEPACK_KAFKA_TLS: 'on',
        ICEPACK_KAFKA_TLS_CA_FILE: '/s/ca.pem',
        ICEPACK_KAFKA_TLS_CERT_FILE: '/s/cert.pem',
        ICEPACK_KAFKA_TLS_KEY_FILE: '/s/key.pem',
        ICEPACK_KAFKA_SASL_MECHANISM: 'scram-sha-512',
        ICEPACK_KAFKA_SASL_USERNAME: 'icepack-planner',
        ICEPACK_KAFKA_SASL_PASSWORD: 'pw',
      }),
      read,
    );
    expect(transport).toEqual({
      ssl: { ca: 'CA', cert: 'CERT', key: 'KEY', rejectUnauthorized: true },
      sasl: { mechanism: 'scram-sha-512', username: 'icepack-planner', password: 'pw' },
    });
  });

  it('uses the system CAs when TLS is on without a CA file', () => {
    expect(kafkaTransport(config({ ICEPACK_KAFKA_TLS: 'true' }), read)).toEqual({ ssl: true });
  });

  it('reads the OAUTHBEARER token file on every authentication', async () => {
    const transport = kafkaTransport(
      config({
        ICEPACK_KAFKA_SASL_MECHANISM: 'oauthbearer',
        ICEPACK_KAFKA_SASL_OAUTH_TOKEN_FILE: '/s/token',
      }),
      read,
    );
    const sasl = transport.sasl as { oauthBearerProvider: () => Promise<{ value: string }> };
    await expect(sasl.oauthBearerProvider()).resolves.toEqual({ value: 'eyJtoken' });
    files['/s/token'] = 'rotated';
    await expect(sasl.oauthBearerProvider()).resolves.toEqual({ value: 'rotated' });
  });

  it('names each missing or contradicting variable and never quotes the password', () => {
    const problems = problemsOf(() =>
      kafkaTransport(
        config({
          ICEPACK_KAFKA_SASL_MECHANISM: 'scram-sha-512',
          ICEPACK_KAFKA_TLS_CA_FILE: '/s/ca.pem',
          ICEPACK_KAFKA_SASL_PASSWORD: 'hunter2',
        }),
        read,
      ),
    );
    expect(problems).toEqual([
      'ICEPACK_KAFKA_TLS_CA_FILE: set, but ICEPACK_KAFKA_TLS is off',
      'ICEPACK_KAFKA_SASL_USERNAME: required when the mechanism is scram-sha-512',
    ]);
    expect(
      problemsOf(() =>
        kafkaTransport(
          config({ ICEPACK_KAFKA_SASL_USERNAME: 'u', ICEPACK_KAFKA_SASL_PASSWORD: 'hunter2' }),
          read,
        ),
      ).join('\n'),
    ).not.toContain('hunter2');
    expect(
      problemsOf(() =>
        kafkaTransport(
          config({ ICEPACK_KAFKA_TLS: 'on', ICEPACK_KAFKA_TLS_CERT_FILE: '/s/nope.pem' }),
          read,
        ),
      ),
    ).toEqual([
      'ICEPACK_KAFKA_TLS_KEY_FILE: required with ICEPACK_KAFKA_TLS_CERT_FILE (a client certificate needs both)',
      'ICEPACK_KAFKA_TLS_CERT_FILE: cannot read /s/nope.pem: ENOENT',
    ]);
  });

  it('rejects an unknown mechanism at load time, naming the variable', () => {
    expect(problemsOf(() => config({ ICEPACK_KAFKA_SASL_MECHANISM: 'gssapi' }))).toEqual([
      'ICEPACK_KAFKA_SASL_MECHANISM: expected none, plain, scram-sha-256, scram-sha-512 or oauthbearer',
    ]);
  });

  it('reads the SASL password from ICEPACK_KAFKA_SASL_PASSWORD_FILE', () => {
    const file = join(tempDir('icepack-kafka-pw-'), 'password');
    writeFileSync(file, 'from-file\n');
    const loaded = config({
      ICEPACK_KAFKA_SASL_MECHANISM: 'scram-sha-512',
      ICEPACK_KAFKA_SASL_USERNAME: 'u',
      ICEPACK_KAFKA_SASL_PASSWORD_FILE: file,
    });
    expect(kafkaTransport(loaded, read).sasl).toEqual({
      mechanism: 'scram-sha-512',
      username: 'u',
      password: 'from-file',
    });
  });
});

describe('redisTransport', () => {
  it('passes the ACL user and password and turns TLS on for rediss://', () => {
    expect(
      redisTransport(
        config({
          ICEPACK_REDIS_URL: 'rediss://redis:6380',
          ICEPACK_REDIS_USERNAME: 'icepack-planner',
          ICEPACK_REDIS_PASSWORD: 'pw',
          ICEPACK_REDIS_TLS_CA_FILE: '/s/ca.pem',
        }),
        read,
      ),
    ).toEqual({
      username: 'icepack-planner',
      password: 'pw',
      tls: { ca: 'CA', rejectUnauthorized: true },
    });
    expect(redisTransport(config({}), read)).toEqual({});
  });

  it('refuses credentials given twice and a user without a password, naming the variables', () => {
    expect(
      problemsOf(() =>
        redisTransport(
          config({
            ICEPACK_REDIS_URL: 'redis://u:hunter2@redis:6379',
            ICEPACK_REDIS_USERNAME: 'v',
            ICEPACK_REDIS_PASSWORD: 'other',
          }),
          read,
        ),
      ),
    ).toEqual([
      'ICEPACK_REDIS_USERNAME: set, but ICEPACK_REDIS_URL names a user too',
      'ICEPACK_REDIS_PASSWORD: set, but ICEPACK_REDIS_URL holds a password too',
    ]);
    expect(problemsOf(() => redisTransport(config({ ICEPACK_REDIS_USERNAME: 'u' }), read))).toEqual(
      ['ICEPACK_REDIS_PASSWORD: required with ICEPACK_REDIS_USERNAME'],
    );
  });
});
