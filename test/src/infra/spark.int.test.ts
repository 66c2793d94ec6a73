import { existsSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { runLocalScript } from './local-script.ts';

const infra = inject('infra');

const sparkCheck = () => runLocalScript('spark.sh', ['check']);

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
