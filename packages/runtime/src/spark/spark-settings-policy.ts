import type { z } from 'zod';
import { commaList } from '../config/fields.ts';

/**
 * Which Spark settings a resource group may give its jobs: the provisioner refuses the rest
 * at its API (400 naming the field) and the dispatcher refuses to run a binding that carries
 * them (a forged `BindingUpdated`). Pure; one home for both. See docs/security.md.
 */
export interface SparkSettingsPolicy {
  /**
   * `sparkConf` keys a group may set: exact keys, or prefixes written with a trailing `*`
   * (`spark.sql.adaptive.*`).
   */
  readonly confKeys: readonly string[];
  /**
   * Where a group's `spark.image` may come from: registry (and repository) prefixes, matched
   * literally up to a `/` (`ghcr.io/icepack` allows `ghcr.io/icepack/spark-job:1.2`).
   */
  readonly imageRegistries: readonly string[];
}

/**
 * Tuning that changes how much a job reads at once, never what it runs, mounts or trusts:
 * no classpath, JVM options, catalogs, Hadoop or Kubernetes settings.
 */
export const DEFAULT_SPARK_CONF_KEYS: readonly string[] = [
  'spark.sql.shuffle.partitions',
  'spark.default.parallelism',
  'spark.sql.adaptive.*',
  'spark.sql.files.maxPartitionBytes',
  'spark.sql.files.openCostInBytes',
  'spark.sql.iceberg.*',
  'spark.driver.memoryOverhead',
  'spark.driver.memoryOverheadFactor',
  'spark.executor.memoryOverhead',
  'spark.executor.memoryOverheadFactor',
  'spark.memory.fraction',
  'spark.memory.storageFraction',
  'spark.network.timeout',
  'spark.executor.heartbeatInterval',
  'spark.task.maxFailures',
  // The job's span exporter (docs/operations.md): OpenTelemetry variables only.
  'spark.kubernetes.driverEnv.OTEL_*',
];

/** Where Icepack's own job image is published. */
export const DEFAULT_SPARK_IMAGE_REGISTRIES: readonly string[] = ['ghcr.io/icepack'];

export const defaultSparkSettingsPolicy: SparkSettingsPolicy = {
  confKeys: DEFAULT_SPARK_CONF_KEYS,
  imageRegistries: DEFAULT_SPARK_IMAGE_REGISTRIES,
};

/** One refused part of a group's Spark settings: `path` is the dotted field under `spark`. */
export interface SparkSettingsProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * Host paths of the nodes: refused whatever the allow-list says (`spark.kubernetes.driver.
 * volumes.hostPath.x.mount.path`, executor the same), as is any `volumes` key with `hostPath`.
 */
const HOST_PATH = /^spark\.kubernetes\.[^.]+\.volumes\.hostPath\./i;

export function confKeyAllowed(key: string, allowed: readonly string[]): boolean {
  return allowed.some((entry) =>
    entry.endsWith('*') ? key.startsWith(entry.slice(0, -1)) : key === entry,
  );
}

export function imageAllowed(image: string, registries: readonly string[]): boolean {
  return registries.some((entry) => {
    const prefix = entry.replace(/\/+$/, '');
    return prefix !== '' && image.startsWith(`${prefix}/`) && !image.includes('..');
  });
}

/** What of `spark` (a group's or a binding's Spark settings) the policy refuses; [] when none. */
export function sparkSettingsProblems(
  spark: {
    readonly image?: string | undefined;
    readonly sparkConf: Readonly<Record<string, string>>;
  },
  policy: SparkSettingsPolicy,
): SparkSettingsProblem[] {
  const problems: SparkSettingsProblem[] = [];
  if (spark.image !== undefined && !imageAllowed(spark.image, policy.imageRegistries)) {
    problems.push({
      path: 'spark.image',
      message: `image ${spark.image} is not from an allowed registry (${policy.imageRegistries.join(', ') || 'none allowed'}; ICEPACK_SPARK_IMAGE_REGISTRIES)`,
    });
  }
  for (const key of Object.keys(spark.sparkConf)) {
    const path = `spark.sparkConf["${key}"]`;
    if (HOST_PATH.test(key)) {
      problems.push({ path, message: `${key}: hostPath volumes are never allowed` });
    } else if (!confKeyAllowed(key, policy.confKeys)) {
      problems.push({
        path,
        message: `${key} is not an allowed Spark setting (ICEPACK_SPARK_CONF_ALLOW)`,
      });
    }
  }
  return problems;
}

/** The variables of the services that check group Spark settings (provisioner, dispatcher). */
export const sparkSettingsConfig = {
  /** Allowed `sparkConf` keys, comma-separated; `prefix.*` allows a prefix. */
  ICEPACK_SPARK_CONF_ALLOW: commaList(DEFAULT_SPARK_CONF_KEYS),
  /** Allowed registry/repository prefixes of a group's `spark.image`, comma-separated. */
  ICEPACK_SPARK_IMAGE_REGISTRIES: commaList(DEFAULT_SPARK_IMAGE_REGISTRIES),
};

type SparkSettingsConfig = z.output<z.ZodObject<typeof sparkSettingsConfig>>;

export function sparkSettingsPolicy(config: SparkSettingsConfig): SparkSettingsPolicy {
  return {
    confKeys: config.ICEPACK_SPARK_CONF_ALLOW,
    imageRegistries: config.ICEPACK_SPARK_IMAGE_REGISTRIES,
  };
}
