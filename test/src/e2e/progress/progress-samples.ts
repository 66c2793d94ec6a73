import { sampleSessionTail as sessionTail } from '@icepack/types';

/** A resident session's idle tail, as the progress tests read it (60 s idle, 2 cores). */
export const sampleSessionTail = sessionTail({
  taskId: 'merge/lake/demo/events',
  table: { catalog: 'lake', namespace: ['demo'], name: 'events' },
  runId: 'batch-1-a1',
  at: '2026-12-05T00:01:00.000Z',
  idleMs: 60_142,
  cost: { runMs: 60_142, coreSecondsRequested: 120.284 },
});
