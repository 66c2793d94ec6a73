import { describe, expect, it } from 'vitest';
import { parsePrometheusText, sumSamples } from './prometheus-text.ts';

const body = `# HELP icepack_planner_tasks_total Tasks
# TYPE icepack_planner_tasks_total counter
icepack_planner_tasks_total{catalog="a",task_type="merge",action="created"} 3
icepack_planner_tasks_total{catalog="a",task_type="sort",action="created"} 1
icepack_planner_tasks_total{catalog="b",task_type="merge",action="created"} 5
icepack_up 1
odd{reason="say \\"hi\\"\\nbye"} 2
`;

describe('Prometheus text', () => {
  it('parses names, labels (unescaped) and values', () => {
    const samples = parsePrometheusText(body);
    expect(samples).toHaveLength(5);
    expect(samples[3]).toEqual({ name: 'icepack_up', labels: {}, value: 1 });
    expect(samples[4]?.labels.reason).toBe('say "hi"\nbye');
  });

  it('sums the samples matching a name and a subset of labels', () => {
    const samples = parsePrometheusText(body);
    expect(sumSamples(samples, 'icepack_planner_tasks_total', { catalog: 'a' })).toBe(4);
    expect(sumSamples(samples, 'icepack_planner_tasks_total', { task_type: 'merge' })).toBe(8);
    expect(sumSamples(samples, 'icepack_planner_tasks_total', { catalog: 'c' })).toBe(0);
  });
});
