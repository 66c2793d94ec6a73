import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { infraEnv } from '@icepack/test';

const script = resolve(import.meta.dirname, '..', '..', 'test-support', 'spark-sql.py');

/** Runs Spark SQL statements in one local Spark session bound to the REST catalog. */
export function sparkSql(statements: readonly string[], catalogName = 'fixtures'): Promise<void> {
  const env = infraEnv();
  return new Promise((done, fail) => {
    const child = spawn(
      env.python,
      [script, '--catalog-uri', env.catalogUri, '--catalog-name', catalogName, ...statements],
      {
        env: { ...process.env, ICEPACK_SPARK_JARS: env.sparkJars },
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 5 * 60_000,
        killSignal: 'SIGKILL',
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.on('error', fail);
    child.on('close', (code) => {
      if (code === 0) done();
      else fail(new Error(`spark-sql.py failed (exit ${String(code)}):\n${stderr}`));
    });
  });
}
