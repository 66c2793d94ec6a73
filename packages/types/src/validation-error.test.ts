import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatPath, formatZodError, parseWith, ValidationError } from './validation-error.ts';

describe('formatPath', () => {
  it.each([
    [['payload', 'table', 'namespace', 0], 'payload.table.namespace[0]'],
    [['snapshots', 3, 'snapshot-id'], 'snapshots[3].snapshot-id'],
    [['properties', 'write.format.default'], 'properties["write.format.default"]'],
    [[0, 'a'], '[0].a'],
    [[], ''],
  ])('%j → %s', (path, expected) => {
    expect(formatPath(path)).toBe(expected);
  });
});

describe('parseWith', () => {
  const schema = z.object({ table: z.object({ namespace: z.array(z.string().min(1)) }) });

  it('returns the parsed value', () => {
    expect(parseWith(schema, { table: { namespace: ['a'] } }, 'thing')).toEqual({
      table: { namespace: ['a'] },
    });
  });

  it('throws a ValidationError naming the field', () => {
    let caught: unknown;
    try {
      parseWith(schema, { table: { namespace: [''] } }, 'thing');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    const error = caught as ValidationError;
    expect(error.name).toBe('ValidationError');
    expect(error.subject).toBe('thing');
    expect(error.issues.map((i) => i.path)).toEqual(['table.namespace[0]']);
    expect(error.message).toMatch(/^invalid thing: table\.namespace\[0\]: /);
  });

  it('formatZodError prefixes paths', () => {
    const result = schema.safeParse({ table: { namespace: 'x' } });
    expect(result.success).toBe(false);
    if (!result.success)
      expect(formatZodError(result.error, ['payload'])).toMatch(/^payload\.table\.namespace: /);
  });
});
