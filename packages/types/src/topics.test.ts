import { describe, expect, it } from 'vitest';
import { queueNameForCatalog } from './queue-names.ts';
import { Topics, TopicSpecs } from './topics.ts';

describe('Topics', () => {
  it('describes every topic, and compacts exactly the latest-value topics', () => {
    expect(Object.keys(TopicSpecs).sort()).toEqual(Object.keys(Topics).sort());
    for (const [name, spec] of Object.entries(TopicSpecs)) {
      expect(spec.name).toBe(Topics[name as keyof typeof Topics]);
      expect(spec.cleanupPolicy).toBe(spec.kind === 'compacted' ? 'compact' : 'delete');
    }
  });
});

describe('queueNameForCatalog', () => {
  it.each([
    ['prod', 'icepack-tasks-prod'],
    ['a:b', 'icepack-tasks-a%3Ab'],
    ['100', 'icepack-tasks-100'],
  ])('%s → %s', (catalog, name) => {
    expect(queueNameForCatalog(catalog)).toBe(name);
    expect(queueNameForCatalog(catalog)).not.toContain(':');
  });

  it('rejects an empty name', () => {
    expect(() => queueNameForCatalog('')).toThrow(TypeError);
  });
});
