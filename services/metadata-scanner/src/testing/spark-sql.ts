import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { InfraEnv } from '@icepack/test';

const script = resolve(import.meta.dirname, 'spark-sql.py');

/** Runs Spark SQL statements in one local Spark session (≈ 20–40 s on two cores). */
export function sparkSql(
  infra: InfraEnv,
  catalogName: string,
  statements: readonly string[],
): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(
      infra.python,
      [script, '--catalog-uri', infra.catalogUri, '--catalog-name', catalogName, ...statements],
      {
        env: { ...process.env, ICEPACK_SPARK_JARS: infra.sparkJars },
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 5 * 60_000,
        killSignal: 'SIGKILL',
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4_000);
    });
    child.on('error', fail);
    child.on('close', (code) => {
      if (code === 0) done();
      else fail(new Error(`spark-sql.py failed (exit ${String(code)}):\n${stderr}`));
    });
  });
}
