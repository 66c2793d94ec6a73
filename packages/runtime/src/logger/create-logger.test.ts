import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, withContext } from './create-logger.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      callback();
    },
  });
  return { lines, destination };
}

describe('createLogger', () => {
  it('writes JSON lines with service, level label and child ids', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 'planner', level: 'debug', destination });
    withContext(logger, { tableId: 'cat.db.orders', taskId: 't-1' }).debug('planned');
    expect(lines[0]).toMatchObject({
      level: 'debug',
      service: 'planner',
      tableId: 'cat.db.orders',
      taskId: 't-1',
      msg: 'planned',
    });
    expect(typeof lines[0]?.time).toBe('string');
  });

  it('redacts secrets at the top level and nested in objects', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 's', destination });
    logger.info(
      {
        password: 'p1',
        catalog: { auth: { token: 't1' }, credential: 'c1' },
        req: { headers: { authorization: 'Bearer abc' } },
      },
      'connecting',
    );
    const text = JSON.stringify(lines[0]);
    expect(text).not.toMatch(/p1|t1|c1|Bearer abc/);
    expect(lines[0]).toMatchObject({ password: '[redacted]' });
  });

  it('drops lines below the level', () => {
    const { lines, destination } = capture();
    createLogger({ service: 's', level: 'warn', destination }).info('quiet');
    expect(lines).toHaveLength(0);
  });
});
