import { resolvePolicy } from '@icepack/policy';
import { tempDir } from '@icepack/test';
import { describe, expect, it } from 'vitest';
import { LocalFileIO } from '../io/local-file-io.ts';
import { loadTableFromMetadataFile } from '../metadata/loaded-table.ts';
import { TestTableWriter } from '../testing/test-table-writer.ts';
import { computeTableState } from './compute-table-state.ts';

// Issue 17: the health measure and the policy had two homes. A table that sets only
// icepack.target-file-size-bytes=128MiB was measured with files under 384 MiB counted as small
// (75 % of Iceberg's 512 MiB), while its merge used 96 MiB. Now both come from @icepack/policy.
const MiB = 1024 * 1024;
const id = { catalog: 'lake', namespace: ['sales'], name: 'events' };
const io = new LocalFileIO();

async function tableWithFiles(properties: Record<string, string>) {
  const writer = new TestTableWriter(tempDir('icepack-threshold-'), {
    formatVersion: 2,
    properties,
  });
  const location = await writer.commit({
    operation: 'append',
    summary: { 'added-data-files': '3' },
    newManifests: [
      {
        entries: [
          { path: 'f-10', sizeBytes: 10 * MiB, recordCount: 1 },
          { path: 'f-200', sizeBytes: 200 * MiB, recordCount: 1 },
          { path: 'f-500', sizeBytes: 500 * MiB, recordCount: 1 },
        ],
      },
    ],
  });
  return loadTableFromMetadataFile(id, location, io);
}

describe('the small-file bound the scanner measures with', () => {
  it('is the bound the merge runs with, for a table with only icepack.target-file-size-bytes', async () => {
    const properties = { 'icepack.target-file-size-bytes': String(128 * MiB) };
    const state = await computeTableState(await tableWithFiles(properties));
    const { policy } = resolvePolicy(properties);
    expect(policy.minFileSizeBytes).toBe(96 * MiB);
    expect(state.files.smallFileThresholdBytes).toBe(policy.minFileSizeBytes);
    // Only the 10 MiB file is under 96 MiB; the 200 MiB one was counted under 384 MiB.
    expect(state.files.smallFiles).toBe(1);
    expect(state.files.smallFileBytes).toBe(10 * MiB);
  });

  it('measures with the bound the caller resolved (catalog and namespace layers included)', async () => {
    const state = await computeTableState(await tableWithFiles({}), {
      smallFileThresholdBytes: 300 * MiB,
    });
    expect(state.files.smallFileThresholdBytes).toBe(300 * MiB);
    expect(state.files.smallFiles).toBe(2);
  });
});
