import { describe, expect, it } from 'vitest';
import { expandEnvReferences } from './kubelet-standin.ts';

describe('kubelet stand-in: dependent environment variables, as the kubelet expands them', () => {
  it.each([
    ['id:$(SECRET)', 'id:s3cr3t'],
    ['$(MISSING) stays', '$(MISSING) stays'],
    ['a $$ is a dollar: $$(SECRET)', 'a $ is a dollar: $(SECRET)'],
    ['plain', 'plain'],
  ])('%s', (value, expected) => {
    expect(expandEnvReferences(value, { SECRET: 's3cr3t' })).toBe(expected);
  });
});
