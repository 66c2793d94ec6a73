import { loadConfig } from '@icepack/runtime';
import { describe, expect, it } from 'vitest';
import { configSchema } from './config.ts';

const required = {
  ICEPACK_KAFKA_BROKERS: '127.0.0.1:9092',
  ICEPACK_REDIS_URL: 'redis://127.0.0.1',
};

describe('metadata-scanner config', () => {
  it('writes TableScanned version 1 unless told 2 (ADR 0050); refuses another by name', () => {
    expect(loadConfig(configSchema, required).ICEPACK_SCANNER_TABLE_STATE_VERSION).toBe(1);
    expect(
      loadConfig(configSchema, { ...required, ICEPACK_SCANNER_TABLE_STATE_VERSION: '2' })
        .ICEPACK_SCANNER_TABLE_STATE_VERSION,
    ).toBe(2);
    for (const bad of ['3', '0', 'two'])
      expect(() =>
        loadConfig(configSchema, { ...required, ICEPACK_SCANNER_TABLE_STATE_VERSION: bad }),
      ).toThrow(/ICEPACK_SCANNER_TABLE_STATE_VERSION: /);
  });
});
