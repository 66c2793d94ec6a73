import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from './create-logger.ts';
import { lazyChild } from './lazy-child.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      callback();
    },
  });
  return { lines, logger: createLogger({ service: 'test', level: 'debug', destination }) };
}

describe('lazyChild', () => {
  it('makes no child until the logger is used', () => {
    const { logger } = capture();
    const child = vi.spyOn(logger, 'child');
    const lazy = lazyChild(logger, { topic: 't', offset: '7' });
    expect(child).not.toHaveBeenCalled();
    lazy.info('one');
    lazy.warn('two');
    expect(child).toHaveBeenCalledTimes(1);
  });

  it("writes the child's lines: its bindings, nested bindings, redaction and level", () => {
    const { lines, logger } = capture();
    const outer = lazyChild(logger, { topic: 't', partition: 2 });
    const inner = lazyChild(outer, { messageId: 'm-1' });
    inner.info({ catalog: { token: 'hunter2' } }, 'handled');
    inner.trace('below the level');
    expect(inner.isLevelEnabled('debug')).toBe(true);
    expect(inner.isLevelEnabled('trace')).toBe(false);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'info',
        service: 'test',
        topic: 't',
        partition: 2,
        messageId: 'm-1',
        catalog: { token: '[redacted]' },
        msg: 'handled',
      }),
    ]);
  });

  it('passes a level set on it to the child', () => {
    const { lines, logger } = capture();
    const lazy = lazyChild(logger, { key: 'k' });
    lazy.level = 'error';
    lazy.warn('dropped');
    lazy.error('kept');
    expect(lazy.level).toBe('error');
    expect(lines.map((l) => l['msg'])).toEqual(['kept']);
  });
});
