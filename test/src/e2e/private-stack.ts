import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceProcess } from '@icepack/runtime/testing';
import { infraEnv } from '../infra/env.ts';
import { freePort } from '../infra/free-port.ts';
import { runLocalScript } from '../infra/local-script.ts';

/** The four services, as their directories under services/ name them. */
export type Service = 'provisioner' | 'metadata-scanner' | 'planner' | 'dispatcher';

/** A group of the provisioner's bootstrap file, beyond its name and catalog. */
export interface BootstrapGroup {
  readonly cpu: string;
  readonly memory: string;
  readonly slots: number;
  readonly spark: Readonly<Record<string, string | number>>;
}

const repoRoot = join(import.meta.dirname, '..', '..', '..');

/** A deploy/local script failed; the message carries its output. */
export class StackScriptError extends Error {
  override name = 'StackScriptError';
}

/** The catalog fields of the bootstrap file beyond its name (default: this stack's catalog). */
export interface BootstrapCatalog {
  readonly uri?: string;
  readonly properties?: Readonly<Record<string, string>>;
}

/** An S3 store (moto) and a REST catalog whose warehouse is on it, of one private stack. */
export interface PrivateS3 {
  /** moto's S3 endpoint (path-style; any key is accepted). */
  readonly endpoint: string;
  readonly bucket: string;
  readonly catalogUri: string;
  /** The catalog client properties that reach tables on the store (no keys: the SDK chain). */
  readonly properties: Readonly<Record<string, string>>;
  /**
   * The keys for everything that reads or writes the store (writers, services, their Spark
   * jobs), as the AWS SDK's default chain reads them from the environment — as a deployment
   * gives them; never catalog properties, task data or messages. moto accepts any key: these
   * are random per stack, so a test can look for them where they must not be.
   */
  readonly keys: Readonly<{
    AWS_ACCESS_KEY_ID: string;
    AWS_SECRET_ACCESS_KEY: string;
    AWS_REGION: string;
  }>;
}

/**
 * The catalog client properties of a test's or benchmark's own reads of the store: the keys
 * given as properties, since its process has no AWS environment. The services and Spark get
 * them only as environment (the SDK chain), never as properties.
 */
export function ownReadProperties(s3: PrivateS3): Record<string, string> {
  return {
    ...s3.properties,
    's3.access-key-id': s3.keys.AWS_ACCESS_KEY_ID,
    's3.secret-access-key': s3.keys.AWS_SECRET_ACCESS_KEY,
  };
}

/** One object of an S3 listing. */
export interface S3Object {
  /** `s3://bucket/key`. */
  readonly location: string;
  readonly size: number;
}

/**
 * The objects under an `s3://bucket/prefix` location, through the S3 API (ListObjectsV2,
 * every page) of the stack's store: unsigned and path-style, which moto answers.
 */
export async function s3Objects(s3: PrivateS3, location: string): Promise<S3Object[]> {
  const match = /^s3[an]?:\/\/([^/]+)\/(.*)$/.exec(location);
  if (match === null) throw new Error(`not an s3:// location: ${location}`);
  const [, bucket, prefix] = match as unknown as [string, string, string];
  const objects: S3Object[] = [];
  let token: string | undefined;
  do {
    const url = new URL(`${s3.endpoint}/${bucket}`);
    url.searchParams.set('list-type', '2');
    url.searchParams.set('prefix', prefix);
    if (token !== undefined) url.searchParams.set('continuation-token', token);
    const response = await fetch(url);
    const body = await response.text();
    if (!response.ok)
      throw new Error(`listing ${location}: HTTP ${String(response.status)} ${body}`);
    for (const [, contents] of body.matchAll(/<Contents>(.*?)<\/Contents>/gs)) {
      const key = /<Key>([^<]*)<\/Key>/.exec(contents!)?.[1];
      const size = /<Size>(\d+)<\/Size>/.exec(contents!)?.[1];
      if (key !== undefined && size !== undefined) {
        objects.push({ location: `s3://${bucket}/${unescapeXml(key)}`, size: Number(size) });
      }
    }
    token = /<NextContinuationToken>([^<]+)</.exec(body)?.[1];
  } while (token !== undefined);
  return objects;
}

const unescapeXml = (text: string): string =>
  text
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&apos;', "'")
    .replaceAll('&amp;', '&');

/**
 * Redis, Kafka and the REST catalog of this test alone, started by the same deploy/local
 * scripts as the shared stack but on their own ports and state directory. The end-to-end
 * test stops and starts Kafka and Redis and lets the services maintain every table of its
 * catalog: on the shared stack that would disturb other tests. Spark (a venv and a jar) is
 * shared; it has no server.
 */
export class PrivateStack {
  readonly runDir: string;
  readonly env: Readonly<Record<string, string>>;
  readonly redisUrl: string;
  readonly kafkaBrokers: readonly string[];
  readonly catalogUri: string;
  /** Where {@link writeBootstrap} writes (`ICEPACK_BOOTSTRAP_FILE`). */
  readonly bootstrapFile: string;
  #s3: { env: Record<string, string>; s3: PrivateS3 } | undefined;

  private constructor(runDir: string, ports: Record<string, number>) {
    this.runDir = runDir;
    this.env = {
      ICEPACK_RUN: runDir,
      ICEPACK_REDIS_PORT: String(ports.redis),
      ICEPACK_KAFKA_PORT: String(ports.kafka),
      ICEPACK_KAFKA_CONTROLLER_PORT: String(ports.controller),
      ICEPACK_KAFKA_SASL_PORT: String(ports.sasl),
      ICEPACK_CATALOG_PORT: String(ports.catalog),
    };
    this.redisUrl = `redis://127.0.0.1:${String(ports.redis)}`;
    this.kafkaBrokers = [`127.0.0.1:${String(ports.kafka)}`];
    this.catalogUri = `http://127.0.0.1:${String(ports.catalog)}`;
    this.bootstrapFile = join(runDir, 'bootstrap.yaml');
  }

  static async start(): Promise<PrivateStack> {
    const runDir = await mkdtemp(join(tmpdir(), 'icepack-e2e-'));
    const ports = {
      redis: await freePort(),
      kafka: await freePort(),
      controller: await freePort(),
      // Every port of the broker: its SASL listener too, else it collides with the shared one.
      sasl: await freePort(),
      catalog: await freePort(),
    };
    const stack = new PrivateStack(runDir, ports);
    await stack.script('infra.sh', 'up', 'redis', 'kafka', 'catalog');
    return stack;
  }

  /** `deploy/local/<script> <args>` against this stack; rejects with its output on failure. */
  script(script: string, ...args: string[]): Promise<string> {
    return scriptWith(this.env, script, args);
  }

  /**
   * Starts this stack's S3 store and the REST catalog on it (deploy/local/s3-catalog.sh, on
   * free ports, in this stack's state directory); {@link stop} stops them.
   */
  async startS3(): Promise<PrivateS3> {
    if (this.#s3 !== undefined) return this.#s3.s3;
    const ports = { store: await freePort(), catalog: await freePort() };
    const env = {
      ...this.env,
      ICEPACK_S3_PORT: String(ports.store),
      ICEPACK_S3_CATALOG_PORT: String(ports.catalog),
    };
    const endpoint = `http://127.0.0.1:${String(ports.store)}`;
    const s3: PrivateS3 = {
      endpoint,
      bucket: infraEnv().s3Bucket,
      catalogUri: `http://127.0.0.1:${String(ports.catalog)}`,
      properties: {
        's3.endpoint': endpoint,
        's3.path-style-access': 'true',
        'client.region': 'us-east-1',
      },
      keys: {
        AWS_ACCESS_KEY_ID: `icepack-${randomBytes(6).toString('hex')}`,
        AWS_SECRET_ACCESS_KEY: randomBytes(20).toString('hex'),
        AWS_REGION: 'us-east-1',
      },
    };
    this.#s3 = { env, s3 };
    await scriptWith(env, 's3-catalog.sh', ['up']);
    return s3;
  }

  /**
   * What every service on this stack is given: its Kafka, Redis and state directory, the
   * shared caches (Spark venv and jars), the API token; the caller adds each service's own.
   */
  serviceEnv(service: Service, apiToken: string): Record<string, string> {
    const env = infraEnv();
    return {
      ICEPACK_SERVICE_NAME: service,
      ICEPACK_LOG_LEVEL: 'info',
      ICEPACK_KAFKA_BROKERS: this.kafkaBrokers.join(','),
      ICEPACK_REDIS_URL: this.redisUrl,
      ICEPACK_API_TOKEN: apiToken,
      ICEPACK_CACHE: env.cacheDir,
      ICEPACK_RUN: this.runDir,
      ICEPACK_SPARK_JARS: env.sparkJars,
    };
  }

  /**
   * Writes the provisioner's bootstrap file — this stack's catalog as `catalog` and one group
   * of the same name for it — at {@link bootstrapFile}.
   */
  async writeBootstrap(
    catalog: string,
    group: BootstrapGroup,
    definition: BootstrapCatalog = {},
  ): Promise<void> {
    // JSON is YAML.
    const bootstrap = {
      catalogs: [{ name: catalog, type: 'rest', uri: this.catalogUri, ...definition }],
      groups: [{ name: catalog, catalog, ...group }],
    };
    await writeFile(this.bootstrapFile, `${JSON.stringify(bootstrap, null, 2)}\n`);
  }

  async stop(): Promise<string> {
    let failure: Error | undefined;
    if (this.#s3 !== undefined) {
      // The catalog first, then the store it writes to; the rest goes down either way.
      for (const script of ['s3-catalog.sh', 's3.sh']) {
        await scriptWith(this.#s3.env, script, ['stop']).catch((error: unknown) => {
          failure ??= error instanceof Error ? error : new StackScriptError(String(error));
        });
      }
    }
    const output = await this.script('infra.sh', 'down', 'redis', 'kafka', 'catalog');
    if (failure !== undefined) throw failure;
    return output;
  }
}

/** `deploy/local/<script> <args>` with `env`; rejects with its output on failure. */
async function scriptWith(
  env: Readonly<Record<string, string>>,
  script: string,
  args: readonly string[],
): Promise<string> {
  const { code, output } = await runLocalScript(script, args, env);
  if (code !== 0)
    throw new StackScriptError(`${script} ${args.join(' ')} exited ${String(code)}:\n${output}`);
  return output;
}

/**
 * Starts a service as its own process (its src/main.ts), puts it in `running` (so that the
 * caller stops it even when it never gets ready) and waits until its /readyz is 200.
 */
export async function startService(
  service: Service,
  env: Record<string, string>,
  running: Map<Service, ServiceProcess>,
  timeoutMs = 120_000,
): Promise<ServiceProcess> {
  const process = await ServiceProcess.start({
    entry: join(repoRoot, 'services', service, 'src', 'main.ts'),
    env,
    startTimeoutMs: timeoutMs,
  });
  running.set(service, process);
  await process.waitForReadyz((r) => r.status === 200, timeoutMs);
  return process;
}
