import { loadConfig } from '@icepack/runtime';
import { describe, expect, it } from 'vitest';
import { configSchema } from './config.ts';

const required = {
  ICEPACK_KAFKA_BROKERS: '127.0.0.1:9092',
  ICEPACK_REDIS_URL: 'redis://127.0.0.1',
  ICEPACK_API_TOKEN: 'a-token-of-at-least-16-chars',
};

describe('provisioner config', () => {
  it('requires the installation id in kubernetes mode, naming the variable', () => {
    expect(() => loadConfig(configSchema, required)).toThrow(
      /ICEPACK_INSTALLATION_ID: required, not set/,
    );
    expect(
      loadConfig(configSchema, { ...required, ICEPACK_INSTALLATION_ID: 'icepack/prod' })
        .ICEPACK_INSTALLATION_ID,
    ).toBe('icepack/prod');
  });

  it('needs no installation id in local mode', () => {
    expect(
      loadConfig(configSchema, { ...required, ICEPACK_PROVISIONER_MODE: 'local' })
        .ICEPACK_PROVISIONER_MODE,
    ).toBe('local');
  });

  it('refuses an installation id that cannot be an annotation value it can match', () => {
    expect(() =>
      loadConfig(configSchema, { ...required, ICEPACK_INSTALLATION_ID: 'prod cluster' }),
    ).toThrow(/ICEPACK_INSTALLATION_ID: expected letters, digits and - _ \. \/ inside/);
  });

  it('refuses a local capacity with only one of cpu and memory, naming the one given', () => {
    const local = { ...required, ICEPACK_PROVISIONER_MODE: 'local' };
    expect(() => loadConfig(configSchema, { ...local, ICEPACK_LOCAL_CPU: '4' })).toThrow(
      /ICEPACK_LOCAL_CPU: needs ICEPACK_LOCAL_MEMORY as well/,
    );
    expect(() => loadConfig(configSchema, { ...local, ICEPACK_LOCAL_MEMORY: '8Gi' })).toThrow(
      /ICEPACK_LOCAL_MEMORY: needs ICEPACK_LOCAL_CPU as well/,
    );
    expect(
      loadConfig(configSchema, { ...local, ICEPACK_LOCAL_CPU: '4', ICEPACK_LOCAL_MEMORY: '8Gi' })
        .ICEPACK_LOCAL_CPU,
    ).toBe('4');
  });
});
