import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger/create-logger.ts';
import { Lifecycle } from './lifecycle.ts';

function logged() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _e, cb) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, logger: createLogger({ service: 't', destination }) };
}

describe('Lifecycle', () => {
  it('runs steps in reverse registration order, once, logging each', async () => {
    const { lines, logger } = logged();
    const lifecycle = new Lifecycle({ logger });
    const order: string[] = [];
    lifecycle.onShutdown('redis', () => order.push('redis'));
    lifecycle.onShutdown('kafka', async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      order.push('kafka');
    });
    lifecycle.onShutdown('http', () => order.push('http'));

    const [first, second] = await Promise.all([
      lifecycle.shutdown('SIGTERM'),
      lifecycle.shutdown('SIGINT'),
    ]);
    expect(order).toEqual(['http', 'kafka', 'redis']);
    expect(lifecycle.signal.aborted).toBe(true);
    expect(first).toEqual({ clean: true, failed: [], timedOut: false });
    expect(second).toBe(first);
    expect(lines.filter((l) => l.msg === 'shutdown step').map((l) => l.step)).toEqual([
      'http',
      'kafka',
      'redis',
    ]);
  });

  it('goes on after a failing step and reports it', async () => {
    const { logger } = logged();
    const lifecycle = new Lifecycle({ logger });
    const order: string[] = [];
    lifecycle.onShutdown('redis', () => order.push('redis'));
    lifecycle.onShutdown('kafka', () => {
      throw new Error('broker gone');
    });
    const outcome = await lifecycle.shutdown('SIGTERM');
    expect(order).toEqual(['redis']);
    expect(outcome).toEqual({ clean: false, failed: ['kafka'], timedOut: false });
  });

  it('gives up on a step that never finishes once the timeout passes', async () => {
    const { logger } = logged();
    const lifecycle = new Lifecycle({ logger, timeoutMs: 50 });
    lifecycle.onShutdown('stuck', () => new Promise(() => {}));
    const outcome = await lifecycle.shutdown('SIGTERM');
    expect(outcome.timedOut).toBe(true);
    expect(outcome.clean).toBe(false);
  });
});
