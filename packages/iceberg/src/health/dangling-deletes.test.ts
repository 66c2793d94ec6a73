import { describe, expect, it } from 'vitest';
import {
  countDanglingDeletes,
  DeleteKind,
  pathHash,
  type DataFacts,
  type DeleteFacts,
} from './dangling-deletes.ts';

// The spec's "must be applied" conditions, one at a time, at their boundaries.

const EU = '0\u0000{"region":"eu"}';
const US = '0\u0000{"region":"us"}';
const GLOBAL = '1\u0000{}';

function dataFacts(partitions: Record<string, bigint>, paths: readonly string[]): DataFacts {
  const hashes = new Set(paths.map(pathHash));
  return {
    minSequenceByPartition: new Map(Object.entries(partitions)),
    hasPath: (h) => hashes.has(h),
  };
}

function del(
  kind: DeleteKind,
  partitionKey: string,
  seq: number,
  referenced: string | null = null,
): DeleteFacts {
  return {
    kind,
    partitionKey,
    unpartitionedSpec: partitionKey === GLOBAL,
    sequenceNumber: BigInt(seq),
    referencedPathHash: referenced === null ? null : pathHash(referenced),
  };
}

const none = { positionDeleteFiles: 0, equalityDeleteFiles: 0, deletionVectors: 0 };

describe('countDanglingDeletes', () => {
  it.each([
    // position deletes apply to data of the same or an older sequence number
    { what: 'position, older data', d: del(DeleteKind.position, EU, 5), min: 4n, dangling: 0 },
    { what: 'position, same sequence', d: del(DeleteKind.position, EU, 5), min: 5n, dangling: 0 },
    { what: 'position, only newer data', d: del(DeleteKind.position, EU, 5), min: 6n, dangling: 1 },
    // equality deletes only to strictly older data
    { what: 'equality, older data', d: del(DeleteKind.equality, EU, 5), min: 4n, dangling: 0 },
    { what: 'equality, same sequence', d: del(DeleteKind.equality, EU, 5), min: 5n, dangling: 1 },
  ])('$what → $dangling dangling', ({ d, min, dangling }) => {
    const counts = countDanglingDeletes([d], dataFacts({ [EU]: min }, []));
    const kind = d.kind === DeleteKind.position ? 'positionDeleteFiles' : 'equalityDeleteFiles';
    expect(counts).toEqual({ ...none, [kind]: dangling });
  });

  it('a delete in a partition without live data is dangling, whatever its kind', () => {
    const data = dataFacts({ [US]: 1n }, ['us-1']);
    expect(
      countDanglingDeletes(
        [del(DeleteKind.position, EU, 9), del(DeleteKind.equality, EU, 9)],
        data,
      ),
    ).toEqual({ positionDeleteFiles: 1, equalityDeleteFiles: 1, deletionVectors: 0 });
  });

  it('an equality delete of an unpartitioned spec applies to older data in any partition', () => {
    const global = del(DeleteKind.equality, GLOBAL, 5);
    expect(countDanglingDeletes([global], dataFacts({ [US]: 4n }, []))).toEqual(none);
    expect(countDanglingDeletes([global], dataFacts({ [US]: 5n, [EU]: 7n }, []))).toEqual({
      ...none,
      equalityDeleteFiles: 1,
    });
  });

  it('a position delete naming a data file applies only while that file is live', () => {
    const data = dataFacts({ [EU]: 1n }, ['eu-live']);
    // Older data in the partition does not keep it: its rows name the removed file only.
    expect(
      countDanglingDeletes(
        [del(DeleteKind.position, EU, 5, 'eu-live'), del(DeleteKind.position, EU, 5, 'eu-gone')],
        data,
      ),
    ).toEqual({ ...none, positionDeleteFiles: 1 });
  });

  it('a deletion vector is dangling when its data file is gone', () => {
    const data = dataFacts({ [EU]: 1n }, ['eu-live']);
    expect(
      countDanglingDeletes(
        [del(DeleteKind.vector, EU, 5, 'eu-live'), del(DeleteKind.vector, EU, 5, 'eu-gone')],
        data,
      ),
    ).toEqual({ ...none, deletionVectors: 1 });
  });

  it('a position-delete file naming a file that has a deletion vector is dangling (the DV carries its deletes)', () => {
    const data = dataFacts({ [EU]: 1n }, ['eu-1', 'eu-2']);
    expect(
      countDanglingDeletes(
        [
          del(DeleteKind.position, EU, 3, 'eu-1'),
          del(DeleteKind.position, EU, 3, 'eu-2'),
          del(DeleteKind.vector, EU, 4, 'eu-1'),
        ],
        data,
      ),
    ).toEqual({ ...none, positionDeleteFiles: 1 });
  });

  it('hashes paths to 53-bit integers, distinct for near-identical paths', () => {
    const a = pathHash('s3://b/t/data/00000-1-a.parquet');
    const b = pathHash('s3://b/t/data/00000-1-b.parquet');
    expect(Number.isSafeInteger(a) && a >= 0).toBe(true);
    expect(a).not.toBe(b);
    expect(pathHash('s3://b/t/data/00000-1-a.parquet')).toBe(a);
  });
});
