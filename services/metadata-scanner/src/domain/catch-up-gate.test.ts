import { parseCatalog } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { activeAfterCatchUp, CatchUpGate } from './catch-up-gate.ts';
import { CatalogRegistry } from './catalog-registry.ts';

/** A catch-up the test finishes by hand, recording when each started. */
function manualRuns() {
  const runs: { finish: () => void; fail: (e: Error) => void }[] = [];
  const run = () =>
    new Promise<void>((resolve, reject) => runs.push({ finish: resolve, fail: reject }));
  return { runs, run };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('CatchUpGate', () => {
  it('shares one catch-up among callers that arrive before it starts', async () => {
    const { runs, run } = manualRuns();
    const gate = new CatchUpGate(run);
    const done: number[] = [];
    const a = gate.current().then(() => done.push(1));
    const b = gate.current().then(() => done.push(2));
    await tick();
    expect(runs).toHaveLength(1);
    runs[0]!.finish();
    await Promise.all([a, b]);
    expect(done).toEqual([1, 2]);
    expect(runs).toHaveLength(1);
  });

  it('never answers a caller with a catch-up that began before it asked', async () => {
    const { runs, run } = manualRuns();
    const gate = new CatchUpGate(run);
    let earlyDone = false;
    let lateDone = false;
    const early = gate.current().then(() => (earlyDone = true));
    await tick();
    const late = gate.current().then(() => (lateDone = true));
    runs[0]!.finish();
    await early;
    await tick();
    expect(lateDone).toBe(false);
    // The late caller gets a catch-up of its own, started after it asked.
    expect(runs).toHaveLength(2);
    runs[1]!.finish();
    await late;
    expect([earlyDone, lateDone]).toEqual([true, true]);
  });

  it('ends the wait when a catch-up fails, and runs a new one for the next caller', async () => {
    const { runs, run } = manualRuns();
    const gate = new CatchUpGate(run);
    const first = gate.current();
    await tick();
    runs[0]!.fail(new Error('broker gone'));
    await expect(first).rejects.toThrow('broker gone');
    const second = gate.current();
    await tick();
    expect(runs).toHaveLength(2);
    runs[1]!.finish();
    await second;
  });
});

describe('activeAfterCatchUp', () => {
  const catalog = parseCatalog({ name: 'lake', type: 'rest', uri: 'http://catalog' });

  it('finds a binding another replica already acted on, once this one has caught up', async () => {
    const registry = new CatalogRegistry();
    registry.define(catalog);
    // What the control-plane consumer applies while the catch-up runs.
    const found = await activeAfterCatchUp(registry, 'lake', () => {
      registry.bind('lake');
      return Promise.resolve();
    });
    expect(found?.uri).toBe('http://catalog');
  });

  it('does not wait for the control plane when the catalog is active already', async () => {
    const registry = new CatalogRegistry();
    registry.define(catalog);
    registry.bind('lake');
    let caughtUp = false;
    await activeAfterCatchUp(registry, 'lake', () => {
      caughtUp = true;
      return Promise.resolve();
    });
    expect(caughtUp).toBe(false);
  });

  it('is undefined for a catalog still unbound after the catch-up', async () => {
    const registry = new CatalogRegistry();
    registry.define(catalog);
    expect(await activeAfterCatchUp(registry, 'lake', () => Promise.resolve())).toBeUndefined();
  });
});
