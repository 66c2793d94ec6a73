import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, inject, it } from 'vitest';

const infra = inject('infra');
const repoRoot = resolve(import.meta.dirname, '..', '..', '..');

function sparkCheck(): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn('bash', [resolve(repoRoot, 'deploy/local/spark.sh'), 'check'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, output }));
  });
}

describe('Spark with Iceberg', () => {
  it("has the Iceberg Spark runtime jar and Iceberg's AWS bundle where the tests look for them", () => {
    const jars = infra.sparkJars.split(',');
    expect(jars).toHaveLength(2);
    expect(jars[1]).toMatch(/iceberg-aws-bundle-[\d.]+\.jar$/);
    for (const jar of jars) expect(existsSync(jar)).toBe(true);
  });

  // One real PySpark session (local[1]) against the local REST catalog: namespace, table,
  // insert, read back, drop. Slow (a JVM and a Python worker), so this is the only one here.
  it('writes and reads an Iceberg table through the local REST catalog', async () => {
    const { code, output } = await sparkCheck();
    expect(output).toMatch(/spark check: ok \(spark 4\.0\.\d+, 3 rows, 1 snapshot/);
    expect(code).toBe(0);
  }, 300_000);
});
