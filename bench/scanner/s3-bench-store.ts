import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { localScript } from './bench-catalog.ts';
import type { WriteObject } from './manifest-tables.ts';

// The S3 side of the scanner bench (BENCH_STORE=s3): an S3 store and a REST catalog whose
// warehouse is on it, both of the bench's own (deploy/local/s3.sh and s3-catalog.sh with
// other ports and state dir), so 1 000s of tables slow down no test of the shared stack.

export interface S3BenchPorts {
  /** moto's S3 server. */
  readonly store: number;
  readonly catalog: number;
  /** Where the catalog's S3FileIO sends its requests (the bench's counting proxy listens there). */
  readonly catalogStoreProxy: number;
}

export interface S3BenchStore {
  readonly catalogUri: string;
  /** The store itself (not through a proxy): for the generator's writes. */
  readonly storeUri: string;
  readonly bucket: string;
  /** The catalog JVM's and the store's pid files (for their CPU). */
  readonly catalogPidFile: string;
  readonly storePidFile: string;
}

const BUCKET = 'icepack';

async function answers(uri: string): Promise<boolean> {
  try {
    await fetch(uri, { signal: AbortSignal.timeout(5000) });
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts (or reuses) the bench's store and catalog. moto keeps objects in memory: when the
 * store is not running, an earlier run's catalog points at objects that are gone, so its
 * state (SQLite file, generation markers) is dropped and the tables are generated again.
 * The catalog proxy must already listen on `catalogStoreProxy`.
 */
export async function startS3BenchStore(run: string, ports: S3BenchPorts): Promise<S3BenchStore> {
  const env = {
    ICEPACK_RUN: run,
    ICEPACK_S3_PORT: String(ports.store),
    ICEPACK_S3_BUCKET: BUCKET,
    ICEPACK_S3_CATALOG_PORT: String(ports.catalog),
    ICEPACK_S3_CATALOG_STORE_ENDPOINT: `http://127.0.0.1:${ports.catalogStoreProxy}`,
  };
  const storeUri = `http://127.0.0.1:${ports.store}`;
  if (!(await answers(storeUri))) {
    localScript('s3-catalog.sh', 'stop', env);
    rmSync(join(run, 's3-catalog'), { recursive: true, force: true });
    rmSync(join(run, 'generated'), { recursive: true, force: true });
  }
  // Starts the store first (and creates the bucket).
  localScript('s3-catalog.sh', 'up', env);
  return {
    catalogUri: `http://127.0.0.1:${ports.catalog}`,
    storeUri,
    bucket: BUCKET,
    catalogPidFile: join(run, 's3-catalog', 's3-catalog.pid'),
    storePidFile: join(run, 's3', 's3.pid'),
  };
}

/**
 * Writes `s3://bucket/key` objects to the store with a path-style PUT. Unsigned: moto takes
 * any request (a real S3 would need the SDK; the bench writes only to its own moto).
 */
export function s3Writer(storeUri: string): WriteObject {
  return async (location, bytes) => {
    const match = /^s3[an]?:\/\/([^/]+)\/(.+)$/.exec(location);
    if (match === null) throw new Error(`not an s3 location: ${location}`);
    const key = match[2]!.split('/').map(encodeURIComponent).join('/');
    const response = await fetch(`${storeUri}/${encodeURIComponent(match[1]!)}/${key}`, {
      method: 'PUT',
      body: new Uint8Array(bytes), // a copy on its own ArrayBuffer: what fetch takes
    });
    if (!response.ok) {
      throw new Error(`PUT ${location} → ${response.status}: ${await response.text()}`);
    }
  };
}
