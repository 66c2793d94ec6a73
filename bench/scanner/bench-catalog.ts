import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { createNamespace, createTable } from '@icepack/metadata-scanner/testing';

const repo = resolve(import.meta.dirname, '..', '..');

/**
 * The state dir of a bench catalog. In RAM when possible: the catalog's SQLite file and
 * metadata files make creating 10 000 tables take many minutes on a disk.
 */
export function benchRunDir(name: string): string {
  return existsSync('/dev/shm') ? `/dev/shm/${name}` : join(homedir(), '.local', 'state', name);
}

/**
 * A REST catalog of its own for the benchmark (10 000 tables would slow down every test
 * that walks the shared one): deploy/local/catalog.sh with another port and state dir.
 */
export function startBenchCatalog(
  port: number,
  run = benchRunDir('icepack-bench-scanner'),
): string {
  localScript('catalog.sh', 'up', { ICEPACK_CATALOG_PORT: String(port), ICEPACK_RUN: run });
  return `http://127.0.0.1:${port}`;
}

/** Runs `deploy/local/<script> <command>` with `env` on top of this process's environment. */
export function localScript(script: string, command: string, env: Record<string, string>): void {
  const result = spawnSync('bash', [join(repo, 'deploy', 'local', script), command], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`${script} ${command} failed:\n${result.stderr}`);
}

async function tableCount(uri: string, namespace: readonly string[]): Promise<number> {
  const ns = encodeURIComponent(namespace.join('\u001f'));
  const response = await fetch(`${uri}/v1/namespaces/${ns}/tables?pageSize=1000`);
  if (response.status === 404) return 0;
  return ((await response.json()) as { identifiers: unknown[] }).identifiers.length;
}

/**
 * `namespaces` × `perNamespace` tables under `bench.nsNNN` (nested), created with a tiny
 * schema through the REST API; namespaces already complete are kept (reruns are quick).
 */
export async function ensureTables(
  uri: string,
  namespaces: number,
  perNamespace: number,
  concurrency = 8,
): Promise<number> {
  let created = 0;
  for (let n = 0; n < namespaces; n++) {
    const namespace = ['bench', `ns${String(n).padStart(3, '0')}`];
    if ((await tableCount(uri, namespace)) >= perNamespace) continue;
    await createNamespace(uri, namespace);
    await inPool(perNamespace, concurrency, async (name) => {
      await createTable(uri, namespace, name);
      created++;
    });
  }
  return created;
}

/** `make(tNNNN)` for tables 0 … count-1, `concurrency` at a time (the catalog serves in parallel). */
export async function inPool(
  count: number,
  concurrency: number,
  make: (name: string) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await make(`t${String(next++).padStart(4, '0')}`);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
