import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { bindingSchema } from './binding.ts';
import { catalogSchema } from './catalog.ts';
import { commitEventSchema } from './commit-event.ts';
import { dlqRecordSchema } from './dlq-record.ts';
import { parseJsonExact } from './json-exact.ts';
import { parseEnvelope } from './messages.ts';
import { scanRequestSchema } from './scan-request.ts';
import { sessionTailSchema } from './session-tail.ts';
import { tableStateSchema } from './table-state.ts';
import { taskEventSchema } from './task-event.ts';
import { taskSchema } from './task.ts';

// docs/messages.md is the contract other teams read: every JSON example in it must be valid.
const doc = readFileSync(new URL('../../../docs/messages.md', import.meta.url), 'utf8');
const examples = [...doc.matchAll(/```json\n([\s\S]*?)```/g)]
  .map((m) => m[1] ?? '')
  .filter((text) => !text.includes('"..."')); // the envelope's placeholder payload

const payloadSchemas: readonly z.ZodType[] = [
  commitEventSchema,
  scanRequestSchema,
  tableStateSchema,
  taskSchema,
  taskEventSchema,
  sessionTailSchema,
  catalogSchema,
  bindingSchema,
  dlqRecordSchema,
];

describe('docs/messages.md examples', () => {
  it('shows every payload at least once', () => {
    const values = examples.map(parseJsonExact);
    const payloads = values.map((v) =>
      typeof v === 'object' && v !== null && 'payload' in v ? v.payload : v,
    );
    for (const schema of payloadSchemas) {
      expect(payloads.some((p) => schema.safeParse(p).success)).toBe(true);
    }
  });

  it.each(examples.map((text, i) => [i, text] as const))('example %i is valid', (_i, text) => {
    const value = parseJsonExact(text);
    if (typeof value === 'object' && value !== null && 'type' in value && 'payload' in value) {
      expect(() => parseEnvelope(value)).not.toThrow();
    } else {
      expect(payloadSchemas.some((schema) => schema.safeParse(value).success)).toBe(true);
    }
  });
});
