import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { tableTruthSchema, withTempDir, type TableTruth } from '@icepack/test';
import { z } from 'zod';

const script = resolve(import.meta.dirname, '..', '..', '..', 'test', 'build_tables.py');

export const dispatchTruthSchema = tableTruthSchema.extend({
  fileRows: z.array(z.array(z.array(z.string().nullable()))).optional(),
});
export type DispatchTruth = z.infer<typeof dispatchTruthSchema>;

export interface DispatchTableTarget {
  /** Spark catalog name, also `table.catalog` of the tasks. */
  readonly catalogName: string;
  /** First namespace level, unique per test run. */
  readonly prefix: string;
}

export interface DispatchSparkOptions {
  readonly python: string;
  readonly catalogUri: string;
  readonly sparkJars: string;
  /** Catalog client properties (`s3.endpoint` … for a catalog on S3). */
  readonly catalogProperties?: Readonly<Record<string, string>>;
  /**
   * The catalog's OAuth2 credential (`<client id>:<secret>`), for a catalog that requires one:
   * handed to the build's environment as the job gets it, never its argv.
   */
  readonly catalogCredential?: string;
}

export type DispatchTablesOptions = DispatchSparkOptions & DispatchTableTarget;

export interface DispatchTablesExtra {
  readonly truthOnly?: boolean;
  readonly fileRows?: readonly string[];
}

function run(args: readonly string[], options: DispatchSparkOptions): Promise<void> {
  return new Promise((ok, fail) => {
    const child = spawn(options.python, [script, ...args], {
      env: {
        ...process.env,
        ICEPACK_SPARK_JARS: options.sparkJars,
        ...(options.catalogCredential === undefined
          ? {}
          : { ICEPACK_CATALOG_CREDENTIAL: options.catalogCredential }),
      },
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
 * Builds (or, with `truthOnly`, only measures) the fixture tables under `<prefix>.…` of each
 * target in one Spark session — one session start instead of one per target — and returns
 * their truth by fixture key, one record per target in order.
 */
export async function dispatchTableSets(
  keys: readonly string[],
  options: DispatchSparkOptions,
  targets: readonly DispatchTableTarget[],
  extra: DispatchTablesExtra = {},
): Promise<Record<string, DispatchTruth>[]> {
  return withTempDir('icepack-dispatch-', async (dir) => {
    const out = join(dir, 'truth.json');
    const args = ['--catalog-uri', options.catalogUri, '--out', out, '--only', ...keys];
    for (const [key, value] of Object.entries(options.catalogProperties ?? {}))
      args.push('--catalog-property', `${key}=${value}`);
    for (const target of targets) args.push('--target', target.catalogName, target.prefix);
    if (extra.truthOnly === true) args.push('--truth-only');
    if (extra.fileRows !== undefined && extra.fileRows.length > 0)
      args.push('--file-rows', ...extra.fileRows);
    await run(args, options);
    return z
      .array(z.record(z.string(), dispatchTruthSchema))
      .length(targets.length)
      .parse(JSON.parse(await readFile(out, 'utf8')));
  });
}

/** `dispatchTableSets` for the one target of `options`. */
export async function dispatchTables(
  keys: readonly string[],
  options: DispatchTablesOptions,
  extra: DispatchTablesExtra = {},
): Promise<Record<string, DispatchTruth>> {
  const [truth] = await dispatchTableSets(keys, options, [options], extra);
  if (truth === undefined) throw new Error('build_tables.py returned no truth');
  return truth;
}

export type { TableTruth };
