import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { pythonOfVersion } from '@icepack/test';
import { describe, expect, it } from 'vitest';
import { IcebergKeys, PolicyDefaults, PolicyKeys } from './policy-keys.ts';

// The Spark job re-reads the table's own policy (issue 16) in Python, so it cannot import these
// keys: this test keeps its copy equal to @icepack/policy's, the one home of the policy keys.
const jobsDir = resolve(import.meta.dirname, '..', '..', '..', 'jobs', 'spark');
const PRINT = `
import json, icepack_job as j
print(json.dumps({
  "enabled": j.ENABLED_KEY,
  "types": j.TYPE_ENABLED_KEYS,
  "gc": j.GC_ENABLED_KEY,
  "maxAge": list(j.MAX_SNAPSHOT_AGE_KEYS),
  "minKeep": list(j.MIN_SNAPSHOTS_KEYS),
  "defaults": [j.DEFAULT_MAX_SNAPSHOT_AGE_MS, j.DEFAULT_MIN_SNAPSHOTS_TO_KEEP],
  "orphans": [j.ORPHAN_MIN_AGE_KEY, j.ORPHAN_QUARANTINE_WINDOW_KEY, j.ORPHAN_MIN_AGE_FLOOR_MS],
}))
`;

describe('the Spark job reads the table policy with the planner’s keys', () => {
  it('has the same switch, GC and retention keys (highest precedence first) and defaults', async () => {
    const python = await pythonOfVersion('3.11');
    const { stdout } = await promisify(execFile)(python, ['-c', PRINT], { cwd: jobsDir });
    expect(JSON.parse(stdout)).toEqual({
      enabled: PolicyKeys.enabled,
      types: {
        cleanup: PolicyKeys.cleanupEnabled,
        merge: PolicyKeys.mergeEnabled,
        sort: PolicyKeys.sortEnabled,
        orphans: PolicyKeys.orphanEnabled,
      },
      gc: IcebergKeys.gcEnabled,
      maxAge: [PolicyKeys.maxSnapshotAgeMs, IcebergKeys.maxSnapshotAgeMs],
      minKeep: [PolicyKeys.minSnapshotsToKeep, IcebergKeys.minSnapshotsToKeep],
      defaults: [PolicyDefaults.maxSnapshotAgeMs, PolicyDefaults.minSnapshotsToKeep],
      orphans: [
        PolicyKeys.orphanMinAge,
        PolicyKeys.orphanQuarantineWindow,
        PolicyDefaults.orphans.minAgeFloorMs,
      ],
    });
  }, 30_000);
});
