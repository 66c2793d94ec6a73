import type { HealthFigures } from '@icepack/types';
import type { QuotaGate } from '../quota.ts';

/** A quota with room for any job: for tests where the quota is not the point. */
export const roomyQuota: QuotaGate = {
  room: () => Promise.resolve({}),
  acquire: () => Promise.resolve(true),
  release: () => Promise.resolve(),
};

/** A table's figures with work to do (8 of its 9 data files small), for a stand-in reader. */
export const tableFigures: HealthFigures = {
  dataFiles: 9,
  smallFiles: 8,
  deleteFiles: 0,
  snapshots: 3,
  bytes: 1,
};
