import { describe, expect, it } from 'vitest';
import { infraSubset } from './global-setup.ts';

describe('infraSubset (ICEPACK_TEST_INFRA)', () => {
  it('starts everything but Kubernetes when unset or empty: its files start it themselves', () => {
    expect(infraSubset({})).toEqual(['redis', 'kafka', 'catalog', 'spark']);
    expect(infraSubset({ ICEPACK_TEST_INFRA: ' ' })).toEqual([
      'redis',
      'kafka',
      'catalog',
      'spark',
    ]);
  });

  it('names the services to start, separated by spaces or commas', () => {
    expect(infraSubset({ ICEPACK_TEST_INFRA: 'redis kafka,catalog, spark' })).toEqual([
      'redis',
      'kafka',
      'catalog',
      'spark',
    ]);
  });
});
