/**
 * How the kubelet stand-in turns a Spark driver pod into a local `spark-submit`. Pure.
 *
 * Spark's submission client gives the driver container
 * `driver --properties-file /opt/spark/conf/spark.properties --class <main class> <main file> <args…>`
 * and puts the Spark conf in `spark.properties`; the same arguments and conf go to a local run,
 * minus what only makes sense in a cluster (the k8s master, cluster deploy mode, the
 * `spark.kubernetes.*` settings, the driver's network identity).
 */

export interface DriverCommandInput {
  /** The driver container's args. */
  readonly args: readonly string[];
  /** `spark.properties` of the pod, parsed. */
  readonly properties: Readonly<Record<string, string>>;
  /** Paths inside the image → local paths (prefix replacement, `local://` dropped). */
  readonly imagePaths: Readonly<Record<string, string>>;
  /** Added to `spark.jars` (the Iceberg runtime the image would carry). */
  readonly sparkJars?: string;
  readonly maxCores: number;
  /** Heap of the local driver JVM, whatever the pod asks for. */
  readonly driverMemory: string;
}

export interface DriverCommand {
  /** The main file as the pod names it (`local:///opt/icepack/jobs/spark/icepack_job.py`). */
  readonly mainFile: string;
  /** The application's own arguments. */
  readonly appArgs: readonly string[];
  /** The conf passed on (`--conf k=v`). */
  readonly conf: Readonly<Record<string, string>>;
  readonly sparkSubmitArgs: readonly string[];
}

/** Spark conf that names the cluster, the pod or the driver's address: never passed on. */
function clusterOnly(key: string): boolean {
  return (
    key === 'spark.master' ||
    key === 'spark.submit.deployMode' ||
    key === 'spark.app.id' ||
    key.startsWith('spark.kubernetes.') ||
    key.startsWith('spark.driver.host') ||
    key.startsWith('spark.driver.port') ||
    key.startsWith('spark.driver.bindAddress') ||
    key === 'spark.driver.memory'
  );
}

/** `java.util.Properties` text as Spark writes it: `key=value` lines, `#` comments, `\` escapes. */
export function parseSparkProperties(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const at = line.search(/(?<!\\)[=:]/);
    const key = (at < 0 ? line : line.slice(0, at)).trim();
    const value = at < 0 ? '' : line.slice(at + 1).trimStart();
    out[key.replace(/\\(.)/g, '$1')] = value.replace(/\\(.)/g, '$1');
  }
  return out;
}

export function localPath(path: string, imagePaths: Readonly<Record<string, string>>): string {
  const bare = path.replace(/^local:\/\//, '');
  for (const [inImage, here] of Object.entries(imagePaths)) {
    if (bare.startsWith(inImage)) return here + bare.slice(inImage.length);
  }
  return bare;
}

const int = (value: string | undefined, fallback: number): number => {
  const n = Number.parseInt(value ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};

export function driverCommand(input: DriverCommandInput): DriverCommand {
  const args = [...input.args];
  if (args[0] === 'driver') args.shift();
  let mainClass: string | undefined;
  while (args[0]?.startsWith('--') === true) {
    const option = args.shift();
    const value = args.shift();
    if (option === '--class') mainClass = value;
  }
  const mainFile = args.shift();
  if (mainFile === undefined) {
    throw new Error(`driver container args name no application file: ${input.args.join(' ')}`);
  }
  const conf: Record<string, string> = {};
  for (const [key, value] of Object.entries(input.properties)) {
    if (!clusterOnly(key)) conf[key] = value;
  }
  const jars = [
    ...(conf['spark.jars'] ?? '')
      .split(',')
      .filter((jar) => jar !== '')
      .map((jar) => localPath(jar, input.imagePaths)),
    ...(input.sparkJars === undefined ? [] : [input.sparkJars]),
  ];
  if (jars.length > 0) conf['spark.jars'] = jars.join(',');
  conf['spark.ui.enabled'] = 'false';
  const cores = Math.max(
    1,
    Math.min(
      input.maxCores,
      int(input.properties['spark.executor.cores'], 1) *
        int(input.properties['spark.executor.instances'], 1),
    ),
  );
  const sparkSubmitArgs = [
    '--master',
    `local[${String(cores)}]`,
    '--driver-memory',
    input.driverMemory,
    ...(mainClass === undefined || mainClass === 'org.apache.spark.deploy.PythonRunner'
      ? []
      : ['--class', mainClass]),
    ...Object.entries(conf).flatMap(([key, value]) => ['--conf', `${key}=${value}`]),
    localPath(mainFile, input.imagePaths),
    ...args,
  ];
  return { mainFile, appArgs: args, conf, sparkSubmitArgs };
}
