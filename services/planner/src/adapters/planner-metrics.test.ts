import { createLogger, type MessageContext } from '@icepack/runtime';
import { InMemoryMetrics } from '@icepack/runtime/testing';
import { createEnvelope, sampleTableId, tableKey } from '@icepack/types';
import { afterEach, describe, expect, it } from 'vitest';
import { tableState } from '../domain/state-fixtures.ts';
import type { HandleOutcome } from './planner.ts';
import { PlannerMetrics } from './planner-metrics.ts';
import { tableStateHandlers } from './table-state-handlers.ts';

const table = sampleTableId({ catalog: 'lake', name: 'orders' });
const envelope = createEnvelope('TableScanned', tableKey(table), tableState({}, { table }));
const context = {
  topic: 'icepack.table-state',
  partition: 0,
  offset: '0',
  key: tableKey(table),
  headers: {},
  attempt: 1,
  logger: createLogger({ service: 'test', level: 'silent' }),
} satisfies MessageContext;

let metrics: InMemoryMetrics;
afterEach(() => metrics.shutdown());

/** The planner's handlers around a planner that answers `outcome` (or throws it). */
function handlersAnswering(outcome: HandleOutcome | Error) {
  metrics = new InMemoryMetrics();
  const answer = () =>
    outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
  return tableStateHandlers(
    { handleState: answer, handleDropped: answer },
    new PlannerMetrics(metrics.meter),
  );
}

describe('planner metrics', () => {
  it('count the task actions of a state by catalog and type, the state as planned, and its time', async () => {
    const { handlers } = handlersAnswering({
      actions: [
        { type: 'merge', action: 'planned' },
        { type: 'cleanup', action: 'updated' },
      ],
    });
    await handlers.TableScanned?.(envelope, context);
    const tasks = 'icepack.planner.tasks';
    expect(
      await metrics.value(tasks, { catalog: 'lake', task_type: 'merge', action: 'created' }),
    ).toBe(1);
    expect(
      await metrics.value(tasks, { catalog: 'lake', task_type: 'cleanup', action: 'updated' }),
    ).toBe(1);
    expect(
      await metrics.value('icepack.planner.table_states', { catalog: 'lake', outcome: 'planned' }),
    ).toBe(1);
    const latency = await metrics.total('icepack.planner.plan.duration.seconds', {
      catalog: 'lake',
    });
    expect(latency.count).toBe(1);
  });

  it.each([
    [{ actions: [] }, 'unchanged'],
    [{ ignored: 'older', actions: [] }, 'stale'],
    [{ ignored: 'duplicate', actions: [] }, 'duplicate'],
  ] as const)('count a state that changed no task as %j → %s', async (outcome, label) => {
    const { handlers } = handlersAnswering(outcome);
    await handlers.TableScanned?.(envelope, context);
    expect(await metrics.value('icepack.planner.table_states', { outcome: label })).toBe(1);
    expect(await metrics.value('icepack.planner.tasks')).toBe(0);
  });

  it('count a failed handling and still let the error reach the consumer (redelivery)', async () => {
    const { handlers } = handlersAnswering(new Error('redis down'));
    await expect(handlers.TableScanned?.(envelope, context)).rejects.toThrow('redis down');
    expect(
      await metrics.value('icepack.planner.table_states', { catalog: 'lake', outcome: 'failed' }),
    ).toBe(1);
    expect((await metrics.total('icepack.planner.plan.duration.seconds')).count).toBe(0);
  });

  it('count a tombstone as a dropped table of its catalog', async () => {
    const { onTombstone } = handlersAnswering({ actions: [{ type: 'merge', action: 'skipped' }] });
    await onTombstone(tableKey(table));
    expect(
      await metrics.value('icepack.planner.table_states', { catalog: 'lake', outcome: 'dropped' }),
    ).toBe(1);
    expect(await metrics.value('icepack.planner.tasks', { action: 'skipped' })).toBe(1);
  });
});
