// Setup file of the integration project: a file of the paired lane (lanes.ts) holds one of the
// two heavy slots for its whole run, so at most two of them run at once; any other file outside
// the shared lane holds both, so it runs alone; a Kubernetes file then starts the control plane
// (the global setup does not), waiting for its build if it is not done.
// Every file appends how long it waited and ran to `integration-lanes.tsv` in the run directory,
// which `./dev test` summarises at the end (the heavy files' run times add up to most of the
// run's wall time).
import { appendFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { holdSlots, type HeldLock } from './lane-lock.ts';
import { laneOf, slotsOf, type Lane } from './lanes.ts';
import { runLocalScript } from './local-script.ts';

const root = resolve(import.meta.dirname, '../../..');

/**
 * A wait for the lane may last as long as the longest exclusive file runs, and a Kubernetes
 * file's as long as the rest of the control plane's first build.
 */
const LANE_WAIT_MS = 3 * 60 * 60_000;

let held: HeldLock | undefined;
let timing: { file: string; lane: Lane; queued: number; started: number } | undefined;

// Vitest reads a hook's first parameter for the fixtures it uses (none here): the suite is the
// second, and the first must be a destructuring pattern.
// eslint-disable-next-line no-empty-pattern
beforeAll(async ({}, suite) => {
  const file = relative(root, suite.file.filepath);
  const lane = laneOf(file);
  const queued = Date.now();
  const slots = slotsOf(file);
  if (slots !== 'none') held = await holdSlots(inject('infra').runDir, slots);
  timing = { file, lane, queued, started: Date.now() };
  if (lane === 'kubernetes') {
    const up = await runLocalScript('k8s.sh', ['up']);
    if (up.code !== 0)
      throw new Error(
        `deploy/local/k8s.sh up failed (exit ${String(up.code)}):\n${up.output.trim()}`,
      );
  }
}, LANE_WAIT_MS);

afterAll(async () => {
  await held?.release();
  held = undefined;
  if (timing === undefined) return;
  const { file, lane, queued, started } = timing;
  timing = undefined;
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  await appendFile(
    join(inject('infra').runDir, 'integration-lanes.tsv'),
    `${lane}\t${seconds(started - queued)}\t${seconds(Date.now() - started)}\t${file}\n`,
  );
});
