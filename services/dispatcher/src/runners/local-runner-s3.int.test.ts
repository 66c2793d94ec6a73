// A merge on a table whose files live on S3, in a catalog that requires OAuth2 client
// credentials, dispatched by the task worker and run for real by the local runner (issue 20;
// issue 14's "the local runner passes no catalog auth/props to the Spark job"). The job must
// get the catalog's properties (S3 endpoint, path style, region) and its credential, and no
// secret may show in the spark-submit argv, the run's files or the task events.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger, defaultCatalogAccessPolicy, secretResolver } from '@icepack/runtime';
import { runLocalScript, startOAuth2CatalogProxy, type OAuth2CatalogProxy } from '@icepack/test';
import { catalogSchema, queueNameForCatalog, type TaskEvent } from '@icepack/types';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { figuresCatalog } from '../adapters/create-catalog-worker.ts';
import type { QuotaGate } from '../adapters/quota.ts';
import { CatalogTableHealth } from '../adapters/table-health.ts';
import { InMemoryDispatchSink } from '../adapters/task-events.ts';
import { TaskWorker } from '../adapters/task-worker.ts';
import { dispatchTables, type DispatchTruth } from '../adapters/testing/dispatch-tables.ts';
import { mergeTask } from '../adapters/testing/sample-tasks.ts';
import { testBinding } from '../adapters/testing/test-binding.ts';
import { DEFAULT_JOB_FILE, LocalRunner } from './local-runner.ts';

const infra = inject('infra');
const suffix = randomBytes(3).toString('hex');
const catalogName = `s3disp${suffix}`;
const prefix = `s3_${suffix}`;
const KEY = 'unpartitioned-small-files';
const logger = createLogger({ service: 's3-dispatch-test', level: 'warn' });

// The secrets of this run: the OAuth2 client secret (resolved by the dispatcher from its
// ICEPACK_SECRET_* variable) and static S3 keys (the AWS SDK's default chain, from the
// dispatcher's environment). moto accepts any key.
const clientSecret = randomBytes(18).toString('hex');
const secretVariable = `ICEPACK_SECRET_S3DISP_${suffix.toUpperCase()}`;
const accessKeyId = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
const secretAccessKey = randomBytes(20).toString('hex');
const secrets = [clientSecret, accessKeyId, secretAccessKey];
// The dispatcher's own secret, in its environment as the chart gives it: never the job's.
const redisPassword = randomBytes(12).toString('hex');

const s3Properties = {
  's3.endpoint': infra.s3Endpoint,
  's3.path-style-access': 'true',
  'client.region': 'us-east-1',
};

/**
 * The S3 store and the REST catalog on it are not part of `infra.sh up` (one more JVM, ~12 s
 * to start on this machine): started here, on demand, and left running like the rest.
 */
async function startS3Catalog(): Promise<void> {
  const { code, output } = await runLocalScript('s3-catalog.sh', ['up']);
  if (code !== 0)
    throw new Error(
      `deploy/local/s3-catalog.sh up (the S3 store and the REST catalog on it) failed (exit ${String(code)}):\n${output.trim()}`,
    );
}

/** Keys of the objects under `prefix` in the warehouse bucket (moto's ListObjectsV2). */
async function s3Keys(keyPrefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const url = new URL(`${infra.s3Endpoint}/${infra.s3Bucket}`);
    url.searchParams.set('list-type', '2');
    url.searchParams.set('prefix', keyPrefix);
    if (token !== undefined) url.searchParams.set('continuation-token', token);
    const body = await (await fetch(url)).text();
    for (const m of body.matchAll(/<Key>([^<]+)<\/Key>/g)) keys.push(m[1]!);
    token = /<NextContinuationToken>([^<]+)</.exec(body)?.[1];
  } while (token !== undefined);
  return keys;
}

/** The table's key prefix in the bucket, from its `s3://bucket/…/metadata/….json`. */
function tableKeyPrefix(metadataLocation: string): string {
  const url = new URL(metadataLocation);
  return url.pathname.slice(1).replace(/metadata\/[^/]+$/, '');
}

/**
 * Rows and a content checksum of Parquet objects in the bucket, read with pyarrow straight
 * from S3 (no Spark session): each row as sorted-key JSON, the lines sorted, SHA-256.
 */
const CONTENT_SCRIPT = `
import hashlib, json, os, sys
import pyarrow.parquet as pq
from pyarrow import fs
endpoint, bucket, keys = sys.argv[1], sys.argv[2], sys.argv[3:]
s3 = fs.S3FileSystem(endpoint_override=endpoint.split("://", 1)[1], scheme="http", region="us-east-1",
    access_key=os.environ["AWS_ACCESS_KEY_ID"], secret_key=os.environ["AWS_SECRET_ACCESS_KEY"])
rows = []
for key in keys:
    rows += [json.dumps(r, sort_keys=True, default=str) for r in pq.read_table(f"{bucket}/{key}", filesystem=s3).to_pylist()]
rows.sort()
print(json.dumps({"rows": len(rows), "checksum": hashlib.sha256("\\n".join(rows).encode()).hexdigest()}))
`;

function content(keys: readonly string[]): Promise<{ rows: number; checksum: string }> {
  return new Promise((done, fail) => {
    const child = spawn(
      infra.python,
      ['-c', CONTENT_SCRIPT, infra.s3Endpoint, infra.s3Bucket, ...keys],
      { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) =>
      code === 0
        ? done(JSON.parse(out) as { rows: number; checksum: string })
        : fail(new Error(`reading Parquet from S3 failed (exit ${String(code)}): ${err}`)),
    );
  });
}

/** The Parquet objects under the table's location in the bucket. */
async function dataObjects(truth: DispatchTruth): Promise<string[]> {
  const keys = await s3Keys(tableKeyPrefix(truth.metadataLocation));
  return keys.filter((key) => key.endsWith('.parquet'));
}

/** The fixture table on the S3 catalog, reached directly (the proxy guards the dispatcher's way in). */
const onS3 = {
  python: infra.python,
  catalogUri: infra.s3CatalogUri,
  sparkJars: infra.sparkJars,
  catalogProperties: s3Properties,
  catalogName,
  prefix,
};

const roomyQuota: QuotaGate = {
  room: () => Promise.resolve({}),
  acquire: () => Promise.resolve(true),
  release: () => Promise.resolve(),
};

describe('the local runner on a catalog on S3 behind OAuth2', () => {
  let before: DispatchTruth;
  let contentBefore: { rows: number; checksum: string };
  let contentAfter: { rows: number; checksum: string };
  let proxy: OAuth2CatalogProxy;
  let redis: Redis;
  let stateDir: string;
  let argvFile: string;
  let envFile: string;
  let dataBefore: string[];
  let dataAfter: string[];
  const sink = new InMemoryDispatchSink();
  const saved = {
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
    AWS_REGION: process.env.AWS_REGION,
    ICEPACK_REDIS_PASSWORD: process.env.ICEPACK_REDIS_PASSWORD,
    [secretVariable]: process.env[secretVariable],
  };

  beforeAll(async () => {
    await startS3Catalog();
    // The dispatcher's environment: S3 keys for the AWS chain (inherited by the fixture
    // build and by the job), the catalog's client secret under an allowed variable.
    process.env.AWS_ACCESS_KEY_ID = accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = secretAccessKey;
    process.env.AWS_REGION = 'us-east-1';
    // The dispatcher's Redis password and the variable its catalog secret is read from.
    process.env.ICEPACK_REDIS_PASSWORD = redisPassword;
    process.env[secretVariable] = clientSecret;
    before = (await dispatchTables([KEY], onS3))[KEY]!;
    dataBefore = await dataObjects(before);

    proxy = await startOAuth2CatalogProxy({
      target: infra.s3CatalogUri,
      clientId: 'icepack-dispatcher',
      clientSecret,
    });
    const catalog = catalogSchema.parse({
      name: catalogName,
      type: 'rest',
      uri: proxy.uri,
      auth: {
        type: 'oauth2',
        clientId: 'icepack-dispatcher',
        clientSecret: { env: secretVariable },
      },
      properties: s3Properties,
    });
    const resolveSecret = secretResolver(process.env, defaultCatalogAccessPolicy);

    // spark-submit behind a wrapper that records the argv and the environment it was
    // started with.
    const dir = await mkdtemp(join(tmpdir(), 'icepack-s3-runs-'));
    stateDir = join(dir, 'runs');
    argvFile = join(dir, 'argv.txt');
    envFile = join(dir, 'env.bin');
    const wrapper = join(dir, 'spark-submit');
    const realSubmit = join(infra.cacheDir, 'venv', 'bin', 'spark-submit');
    await writeFile(
      wrapper,
      `#!/bin/sh\nprintf '%s\\n' "$@" >> '${argvFile}'\nenv -0 > '${envFile}'\nexec '${realSubmit}' "$@"\n`,
    );
    await chmod(wrapper, 0o755);

    redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: null });
    const bullPrefix = `icepack-s3-test-${suffix}`;
    const rest = figuresCatalog(catalog, {
      localCatalogs: [],
      policy: defaultCatalogAccessPolicy,
      resolveSecret,
    });
    const worker = new TaskWorker({
      binding: testBinding(catalogName),
      connection: redis,
      runner: new LocalRunner({ stateDir, sparkSubmit: wrapper, resolveSecret }),
      quota: roomyQuota,
      sink,
      health: new CatalogTableHealth(() => rest),
      catalog: {
        name: catalog.name,
        uri: catalog.uri,
        auth: catalog.auth,
        properties: catalog.properties,
      },
      logger,
      prefix: bullPrefix,
      timeoutMs: 15 * 60_000,
    });
    const queue = new Queue(queueNameForCatalog(catalogName), {
      connection: redis,
      prefix: bullPrefix,
    });
    const task = mergeTask(before, 5);
    try {
      await queue.add(task.type, task, {
        jobId: task.id,
        removeOnComplete: true,
        removeOnFail: true,
      });
      await worker.start();
      // No timing assertion: waits as long as the run takes (the test's own timeout bounds it).
      while (!sink.events.some((e) => e.status === 'succeeded' || e.status === 'failed'))
        await sleep(500);
    } finally {
      await worker.close(true);
      await queue.obliterate({ force: true });
      await queue.close();
      rest.close();
    }
    // After: no second Spark session; the one new object is the live file (the figures read
    // says so), read with pyarrow like the 60 before it.
    dataAfter = await dataObjects(before);
    contentBefore = await content(dataBefore);
    contentAfter = await content(dataAfter.filter((key) => !dataBefore.includes(key)));
  }, 1_800_000);

  afterAll(async () => {
    await proxy?.close();
    redis?.disconnect();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('merges the small files on S3: one new file, rows and content unchanged', () => {
    const done = sink.events.find((e): e is TaskEvent => e.status === 'succeeded');
    expect(
      done,
      `task events: ${JSON.stringify(sink.events.map((e) => [e.status, e.error]))}`,
    ).toBeDefined();
    expect(before.metadataLocation).toMatch(new RegExp(`^s3://${infra.s3Bucket}/`));
    expect(before.dataFiles.count).toBe(60);
    // The dispatcher's before/after figures, read from S3 through the stand-in with the
    // catalog's auth: 60 files → 1, one more snapshot.
    expect(done?.before).toMatchObject({ dataFiles: 60, snapshots: before.snapshotCount });
    expect(done?.after).toMatchObject({ dataFiles: 1, snapshots: before.snapshotCount + 1 });
    // The rewritten file is on S3: one more object under the table's location (the old files
    // stay until their snapshots expire), holding exactly the rows of the 60 before it.
    expect(dataBefore).toHaveLength(60);
    expect(dataAfter).toHaveLength(61);
    expect(contentBefore.rows).toBe(before.recordCount);
    expect(contentAfter).toEqual(contentBefore);
    // Every catalog request of the job and of the figures read carried a token.
    expect(proxy.seen.tokens).toBeGreaterThanOrEqual(2);
    expect(proxy.seen.refused).toBe(0);
  });

  it('keeps the secrets out of the argv, the run files and the task events', async () => {
    const argv = await readFile(argvFile, 'utf8');
    // The job did get its catalog's properties, as Spark conf.
    expect(argv).toContain(`spark.sql.catalog.${catalogName}.s3.endpoint=${infra.s3Endpoint}`);
    expect(argv).toContain(DEFAULT_JOB_FILE);
    const runs = await readdir(stateDir);
    expect(runs).toHaveLength(1);
    const files = await readdir(join(stateDir, runs[0]!));
    expect(files).toEqual(expect.arrayContaining(['result.json', 'stderr.log', 'stdout.log']));
    const texts: Record<string, string> = {
      argv,
      events: JSON.stringify(sink.events),
    };
    for (const file of files) texts[file] = await readFile(join(stateDir, runs[0]!, file), 'utf8');
    for (const [where, text] of Object.entries(texts))
      for (const secret of secrets)
        expect(text.includes(secret), `${where} holds a secret`).toBe(false);
  });

  it("gives the job its own credential and none of the dispatcher's secrets", async () => {
    const env = new Map(
      (await readFile(envFile, 'utf8'))
        .split('\0')
        .filter((line) => line !== '')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    // What the job needs: its catalog's credential, the object store's keys, Java.
    expect(env.get('ICEPACK_CATALOG_CREDENTIAL')).toBe(`icepack-dispatcher:${clientSecret}`);
    expect(env.get('AWS_ACCESS_KEY_ID')).toBe(accessKeyId);
    expect(env.has('PATH')).toBe(true);
    // Not the dispatcher's Redis password, nor the variable its catalog secret came from.
    expect(env.has('ICEPACK_REDIS_PASSWORD')).toBe(false);
    expect(env.has(secretVariable)).toBe(false);
    expect([...env.values()].some((value) => value.includes(redisPassword))).toBe(false);
  });
});
