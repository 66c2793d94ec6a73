import { describe, expect, it } from 'vitest';
import { holdsJson } from './same-json.ts';

describe('holdsJson', () => {
  it('accepts what the API server adds as defaults', () => {
    const desired = {
      limits: [{ type: 'Container', max: { cpu: '4' }, _default: { memory: '1Gi' } }],
    };
    const stored = {
      limits: [
        {
          type: 'Container',
          max: { cpu: '4' },
          _default: { cpu: '4', memory: '1Gi' },
          defaultRequest: { cpu: '4' },
        },
      ],
    };
    expect(holdsJson(stored, desired)).toBe(true);
    expect(
      holdsJson(
        [{ kind: 'ServiceAccount', name: 'a', namespace: 'n', apiGroup: '' }],
        [{ kind: 'ServiceAccount', name: 'a', namespace: 'n' }],
      ),
    ).toBe(true);
  });

  it('sees a changed, missing or extra element as drift', () => {
    expect(holdsJson({ a: { b: '1' } }, { a: { b: '2' } })).toBe(false);
    expect(holdsJson({ a: {} }, { a: { b: '1' } })).toBe(false);
    expect(holdsJson([{ a: 1 }, { a: 2 }], [{ a: 1 }])).toBe(false);
    expect(holdsJson({ a: 'x' }, { a: ['x'] })).toBe(false);
  });
});
