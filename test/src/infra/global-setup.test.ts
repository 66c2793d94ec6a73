import { describe, expect, it } from 'vitest';
import { infraSubset } from './global-setup.ts';

describe('infraSubset (ICEPACK_TEST_INFRA)', () => {
  it('starts everything when unset or empty', () => {
    expect(infraSubset({})).toEqual([]);
    expect(infraSubset({ ICEPACK_TEST_INFRA: ' ' })).toEqual([]);
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
