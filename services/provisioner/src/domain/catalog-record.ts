import type { Catalog } from '@icepack/types';

/** Result of `GET {uri}/v1/config` when the catalog was created or updated. */
export interface Connectivity {
  /** The catalog answered 200 with a config document. */
  readonly ok: boolean;
  readonly checkedAt: string;
  /** HTTP status, when the catalog answered at all. */
  readonly status?: number;
  /** What happened, for people: "reachable", "HTTP 401 …", "connect ECONNREFUSED …". */
  readonly message: string;
}

/** What Redis holds per catalog. */
export interface CatalogRecord {
  readonly catalog: Catalog;
  readonly connectivity: Connectivity;
  /** Published on `icepack.catalogs`; false → the reconcile loop publishes it. */
  readonly published: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export function catalogView(record: CatalogRecord, boundGroup: string | undefined) {
  return {
    ...record.catalog,
    status: {
      connectivity: record.connectivity,
      published: record.published,
      ...(boundGroup === undefined ? {} : { group: boundGroup }),
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
    },
  };
}
export type CatalogView = ReturnType<typeof catalogView>;
