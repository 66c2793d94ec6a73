import { computeTableState, type RestCatalog } from '@icepack/iceberg';
import type { HealthFigures, TableId, TableState } from '@icepack/types';

/** Reads a table's health figures now (before and after a task). */
export interface TableHealthReader {
  read(table: TableId, minFileSizeBytes?: number): Promise<HealthFigures>;
}

export function healthFromState(state: TableState): HealthFigures {
  const { files } = state;
  return {
    dataFiles: files.dataFiles,
    smallFiles: files.smallFiles,
    deleteFiles: files.positionDeleteFiles + files.equalityDeleteFiles + files.deletionVectors,
    snapshots: state.snapshots.total,
    bytes: files.dataBytes,
  };
}

/**
 * Loads the table through the REST catalog and aggregates its current snapshot's manifests
 * (`@icepack/iceberg`), the same way the metadata scanner measures it.
 */
export class CatalogTableHealth implements TableHealthReader {
  readonly #catalogs: (catalog: string) => RestCatalog;

  constructor(catalogs: (catalog: string) => RestCatalog) {
    this.#catalogs = catalogs;
  }

  async read(table: TableId, minFileSizeBytes?: number): Promise<HealthFigures> {
    const outcome = await this.#catalogs(table.catalog).loadTable(table);
    if (outcome.status !== 'loaded') throw new Error('catalog answered 304 without an ETag');
    const state = await computeTableState(
      outcome.table,
      minFileSizeBytes === undefined ? {} : { smallFileThresholdBytes: minFileSizeBytes },
    );
    return healthFromState(state);
  }
}
