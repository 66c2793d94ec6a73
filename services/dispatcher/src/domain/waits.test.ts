import { describe, expect, it } from 'vitest';
import { waitIsNews, waitMark, WaitKind } from './waits.ts';

describe('waitIsNews (ADR 0041)', () => {
  it('tells a wait when it starts: nothing told yet, or the mark emptied by a runner error', () => {
    expect(waitIsNews(null, 1, WaitKind.quota)).toBe(true);
    expect(waitIsNews(undefined, 1, WaitKind.quota)).toBe(true);
    expect(waitIsNews('', 1, WaitKind.quota)).toBe(true);
  });

  it('tells nothing at a re-check that finds the task still waiting for the same', () => {
    expect(waitIsNews(waitMark(1, WaitKind.quota), 1, WaitKind.quota)).toBe(false);
    expect(waitIsNews(waitMark(2, WaitKind.largeSlot), 2, WaitKind.largeSlot)).toBe(false);
  });

  it('tells a wait of a new attempt, or for something else', () => {
    expect(waitIsNews(waitMark(1, WaitKind.quota), 2, WaitKind.quota)).toBe(true);
    expect(waitIsNews(waitMark(1, WaitKind.largeSlot), 1, WaitKind.quota)).toBe(true);
  });
});
