// Setup file of the integration project: a file outside the shared lane (lanes.ts) holds the
// exclusive lane for its whole run, so no two of them run at once.
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { holdLock, type HeldLock } from './lane-lock.ts';
import { inSharedLane } from './lanes.ts';

const root = resolve(import.meta.dirname, '../../..');

/** A wait for the lane may last as long as the longest exclusive file runs. */
const LANE_WAIT_MS = 3 * 60 * 60_000;

let held: HeldLock | undefined;

// Vitest reads a hook's first parameter for the fixtures it uses (none here): the suite is the
// second, and the first must be a destructuring pattern.
// eslint-disable-next-line no-empty-pattern
beforeAll(async ({}, suite) => {
  if (inSharedLane(relative(root, suite.file.filepath))) return;
  held = await holdLock(join(inject('infra').runDir, 'integration-exclusive-lane.lock'));
}, LANE_WAIT_MS);

afterAll(async () => {
  await held?.release();
  held = undefined;
});
