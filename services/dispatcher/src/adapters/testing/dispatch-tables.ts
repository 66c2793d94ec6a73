import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { tableTruthSchema, type TableTruth } from '@icepack/test';
import { z } from 'zod';

const script = resolve(import.meta.dirname, '..', '..', '..', 'test', 'build_tables.py');

export const dispatchTruthSchema = tableTruthSchema.extend({
  fileRows: z.array(z.array(z.array(z.string().nullable()))).optional(),
});
export type DispatchTruth = z.infer<typeof dispatchTruthSchema>;

export interface DispatchTablesOptions {
  readonly python: string;
  readonly catalogUri: string;
  readonly sparkJars: string;
  /** Spark catalog name, also `table.catalog` of the tasks. */
  readonly catalogName: string;
  /** First namespace level, unique per test run. */
  readonly prefix: string;
}

function run(args: readonly string[], options: DispatchTablesOptions): Promise<void> {
  return new Promise((ok, fail) => {
    const child = spawn(options.python, [script, ...args], {
      env: { ...process.env, ICEPACK_SPARK_JARS: options.sparkJars },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let tail = '';
    child.stderr.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4_000)));
    child.on('error', fail);
    child.on('close', (code) =>
      code === 0 ? ok() : fail(new Error(`build_tables.py exited ${String(code)}:\n${tail}`)),
    );
  });
}

/**
 * Builds (or, with `truthOnly`, only measures) fixture tables under `<prefix>.…` in one
 * Spark session and returns their truth by fixture key.
 */
export async function dispatchTables(
  keys: readonly string[],
  options: DispatchTablesOptions,
  extra: { truthOnly?: boolean; fileRows?: readonly string[] } = {},
): Promise<Record<string, DispatchTruth>> {
  const out = join(await mkdtemp(join(tmpdir(), 'icepack-dispatch-')), 'truth.json');
  const args = [
    '--catalog-uri',
    options.catalogUri,
    '--catalog-name',
    options.catalogName,
    '--prefix',
    options.prefix,
    '--out',
    out,
    '--only',
    ...keys,
  ];
  if (extra.truthOnly === true) args.push('--truth-only');
  if (extra.fileRows !== undefined && extra.fileRows.length > 0)
    args.push('--file-rows', ...extra.fileRows);
  await run(args, options);
  const parsed = z
    .record(z.string(), dispatchTruthSchema)
    .parse(JSON.parse(await readFile(out, 'utf8')));
  return parsed;
}

export type { TableTruth };
