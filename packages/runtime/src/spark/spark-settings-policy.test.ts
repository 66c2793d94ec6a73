import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load-config.ts';
import { z } from 'zod';
import {
  defaultSparkSettingsPolicy,
  sparkSettingsConfig,
  sparkSettingsPolicy,
  sparkSettingsProblems,
} from './spark-settings-policy.ts';

const check = (spark: { image?: string; sparkConf: Record<string, string> }) =>
  sparkSettingsProblems(spark, defaultSparkSettingsPolicy);

describe('sparkSettingsProblems (issue 16, finding 4)', () => {
  it('allows tuning keys, prefixes and the project’s registry by default', () => {
    expect(
      check({
        image: 'ghcr.io/icepack/spark-job:1.2.0',
        sparkConf: {
          'spark.sql.shuffle.partitions': '64',
          'spark.sql.adaptive.coalescePartitions.enabled': 'true',
          'spark.kubernetes.driverEnv.OTEL_EXPORTER_OTLP_ENDPOINT': 'http://otel:4318',
        },
      }),
    ).toEqual([]);
  });

  it('refuses hostPath volumes, classpath, JVM options, catalogs and other env, naming each key', () => {
    const keys = [
      'spark.kubernetes.driver.volumes.hostPath.root.mount.path',
      'spark.kubernetes.executor.volumes.hostPath.root.options.path',
      'spark.driver.extraJavaOptions',
      'spark.jars',
      'spark.sql.catalog.prod.uri',
      'spark.hadoop.fs.s3a.endpoint',
      'spark.kubernetes.driverEnv.PYTHONPATH',
      'spark.kubernetes.authenticate.driver.serviceAccountName',
      'spark.redaction.regex',
    ];
    const problems = check({ sparkConf: Object.fromEntries(keys.map((k) => [k, '/'])) });
    expect(problems.map((p) => p.path)).toEqual(keys.map((k) => `spark.sparkConf["${k}"]`));
    expect(problems[0]?.message).toContain('hostPath volumes are never allowed');
    expect(problems[2]?.message).toContain('not an allowed Spark setting');
  });

  it('hostPath stays refused even when an operator allows every kubernetes key', () => {
    const policy = { ...defaultSparkSettingsPolicy, confKeys: ['spark.kubernetes.*'] };
    const key = 'spark.kubernetes.driver.volumes.hostPath.x.mount.path';
    expect(sparkSettingsProblems({ sparkConf: { [key]: '/' } }, policy)).toHaveLength(1);
    expect(
      sparkSettingsProblems({ sparkConf: { 'spark.kubernetes.node.selector.x': 'y' } }, policy),
    ).toEqual([]);
  });

  it('refuses images from other registries, look-alike hosts and path tricks', () => {
    for (const image of [
      'evil.example/icepack/spark-job:1',
      'ghcr.io/icepack.evil.example/spark-job:1',
      'ghcr.io/icepackx/spark-job:1',
      'ghcr.io/icepack/../other/job:1',
      'spark-job:latest',
    ]) {
      const problems = check({ image, sparkConf: {} });
      expect(
        problems.map((p) => p.path),
        image,
      ).toEqual(['spark.image']);
      expect(problems[0]?.message).toContain('not from an allowed registry');
    }
  });

  it('reads both lists from the environment (comma-separated), with documented defaults', () => {
    const schema = z.object(sparkSettingsConfig);
    const defaults = sparkSettingsPolicy(loadConfig(schema, {}));
    expect(defaults).toEqual(defaultSparkSettingsPolicy);
    const set = sparkSettingsPolicy(
      loadConfig(schema, {
        ICEPACK_SPARK_CONF_ALLOW: 'spark.sql.shuffle.partitions, spark.kubernetes.driver.label.*',
        ICEPACK_SPARK_IMAGE_REGISTRIES: 'registry.internal/spark,',
      }),
    );
    expect(set).toEqual({
      confKeys: ['spark.sql.shuffle.partitions', 'spark.kubernetes.driver.label.*'],
      imageRegistries: ['registry.internal/spark'],
    });
  });
});
