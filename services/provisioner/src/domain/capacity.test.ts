import { describe, expect, it } from 'vitest';
import { checkCapacity } from './capacity.ts';
import { CapacityError } from './errors.ts';

const GiB = 2 ** 30;
const allocatable = { cpuMillis: 24_000, memoryBytes: 96 * GiB };

function refusal(run: () => void): CapacityError {
  try {
    run();
  } catch (error) {
    if (error instanceof CapacityError) return error;
    throw error;
  }
  throw new Error('expected a CapacityError');
}

describe('checkCapacity', () => {
  it('accepts a group that fits exactly what the other groups leave', () => {
    const others = [{ holder: 'a', cpuMillis: 10_000, memoryBytes: 40 * GiB }];
    expect(() =>
      checkCapacity({ name: 'b', cpu: '14', memory: '56Gi' }, allocatable, others, 'the cluster'),
    ).not.toThrow();
  });

  it('refuses with the figures and names each resource that is short', () => {
    const others = [
      { holder: 'a', cpuMillis: 10_000, memoryBytes: 40 * GiB },
      { holder: 'c', cpuMillis: 500, memoryBytes: 0 },
    ];
    const error = refusal(() =>
      checkCapacity({ name: 'b', cpu: '16', memory: '60Gi' }, allocatable, others, 'the cluster'),
    );
    expect(error.figures).toEqual({
      requested: { cpu: '16', memory: '60Gi' },
      allocatable: { cpu: '24', memory: '96Gi' },
      reserved: { cpu: '10500m', memory: '40Gi' },
      free: { cpu: '13500m', memory: '56Gi' },
    });
    expect(error.message).toBe(
      'resource group "b" does not fit the cluster: cpu 16 requested but only 13500m free; memory 60Gi requested but only 56Gi free ' +
        '(allocatable cpu 24, memory 96Gi; reserved by 2 other Icepack groups: cpu 10500m, memory 40Gi)',
    );
  });

  it('does not count the group against itself (a re-check of an existing group)', () => {
    const own = [{ holder: 'b', cpuMillis: 24_000, memoryBytes: 96 * GiB }];
    expect(() =>
      checkCapacity({ name: 'b', cpu: '24', memory: '96Gi' }, allocatable, own, 'the cluster'),
    ).not.toThrow();
  });

  it('reports zero free, never a negative figure, when others over-reserve', () => {
    const others = [{ holder: 'a', cpuMillis: 30_000, memoryBytes: 100 * GiB }];
    const error = refusal(() =>
      checkCapacity({ name: 'b', cpu: '1', memory: '1Gi' }, allocatable, others, 'this machine'),
    );
    expect(error.figures.free).toEqual({ cpu: '0', memory: '0' });
  });
});
