// A merge on a table whose files live on S3, in a real catalog that requires OAuth2 client
// credentials — Nessie's Iceberg REST API, tokens from Keycloak (deploy/local/oauth-catalog.sh,
// ADR 0030) — dispatched by the task worker and run for real by the local runner (issue 20
// point 2; issue 14's "the local runner passes no catalog auth/props to the Spark job"). The
// job must get the catalog's properties (S3 endpoint, path style, region, token endpoint) and
// its credential, fetch its own tokens and refresh them (the client's tokens live 3 s, far
// less than the job: ADR 0037), and no secret may show in the spark-submit argv, the run's
// files or the task events.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger, defaultCatalogAccessPolicy, secretResolver } from '@icepack/runtime';
import { runLocalScript, tempDir } from '@icepack/test';
import { catalogSchema, queueNameForCatalog, type TaskEvent } from '@icepack/types';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { figuresCatalog } from '../adapters/create-catalog-worker.ts';
import { CatalogTableHealth } from '../adapters/table-health.ts';
import { InMemoryDispatchSink } from '../adapters/task-events.ts';
import { TaskWorker } from '../adapters/task-worker.ts';
import { dispatchTables, type DispatchTruth } from '../adapters/testing/dispatch-tables.ts';
import { roomyQuota } from '../adapters/testing/fixtures.ts';
import { mergeTask } from '../adapters/testing/sample-tasks.ts';
import { testBinding } from '../adapters/testing/test-binding.ts';
import { DEFAULT_JOB_FILE, LocalRunner } from './local-runner.ts';

const infra = inject('infra');
const oauth = infra.oauthCatalog;
const suffix = randomBytes(3).toString('hex');
const catalogName = `s3disp${suffix}`;
const prefix = `s3_${suffix}`;
const KEY = 'unpartitioned-small-files';
const logger = createLogger({ service: 's3-dispatch-test', level: 'warn' });

// The secrets of this run: the OAuth2 client secret (Keycloak's, from the state directory;
// resolved by the dispatcher from its ICEPACK_SECRET_* variable) and static S3 keys (the AWS
// SDK's default chain, from the dispatcher's environment; moto accepts any key). Nessie is
// asked for no vended credentials it could hand out (ADR 0037).
const secretVariable = `ICEPACK_SECRET_S3DISP_${suffix.toUpperCase()}`;
const accessKeyId = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
const secretAccessKey = randomBytes(20).toString('hex');
// The dispatcher's own secret, in its environment as the chart gives it: never the job's.
const redisPassword = randomBytes(12).toString('hex');

const s3Properties = {
  's3.endpoint': infra.s3Endpoint,
  's3.path-style-access': 'true',
  'client.region': 'us-east-1',
};

/**
 * Keycloak and Nessie (with the S3 store) are not part of `infra.sh up` (two JVMs, Keycloak
 * 1–3 min to start on this machine): started here, on demand, and left running like the rest.
 */
async function startOAuthCatalog(): Promise<void> {
  const { code, output } = await runLocalScript('oauth-catalog.sh', ['up']);
  if (code !== 0)
    throw new Error(
      `deploy/local/oauth-catalog.sh up (Keycloak and Nessie on the S3 store) failed (exit ${String(code)}):\n${output.trim()}`,
    );
}

/**
 * A token from Keycloak for `clientId`, as any client gets one; with its lifetime as the token
 * states it (`exp` − `iat`: `expires_in` is counted from when the answer left, a second less
 * on a busy machine).
 */
async function fetchToken(
  clientId: string,
  secret: string,
): Promise<{ token: string; lifetimeSeconds: number }> {
  const response = await fetch(oauth.tokenUri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: secret,
      scope: 'catalog',
    }).toString(),
  });
  if (response.status !== 200) throw new Error(`token request: HTTP ${String(response.status)}`);
  const token = ((await response.json()) as { access_token: string }).access_token;
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as {
    exp: number;
    iat: number;
  };
  return { token, lifetimeSeconds: claims.exp - claims.iat };
}

/** Tokens Keycloak issued to `clientId` in bytes [from, to) of its log (CLIENT_LOGIN events). */
async function tokensIssued(clientId: string, from: number, to: number): Promise<number> {
  const text = (await readFile(oauth.issuerLog)).subarray(from, to).toString('utf8');
  return text
    .split('\n')
    .filter(
      (line) => line.includes('type="CLIENT_LOGIN"') && line.includes(`clientId="${clientId}"`),
    ).length;
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

/**
 * The fixture table in Nessie, built with the long-lived client (its credential through the
 * build's environment): the job's short-lived client is what the test is about.
 */
const inNessie = (clientSecret: string) => ({
  python: infra.python,
  catalogUri: oauth.uri,
  sparkJars: infra.sparkJars,
  catalogProperties: {
    ...s3Properties,
    'oauth2-server-uri': oauth.tokenUri,
    'token-exchange-enabled': 'false',
    // As the job asks (catalogSparkConf): no remote signing, the S3 keys of the environment.
    'header.X-Iceberg-Access-Delegation': 'vended-credentials',
  },
  catalogCredential: `${oauth.clientId}:${clientSecret}`,
  catalogName,
  prefix,
});

describe('the local runner on a real OAuth2 catalog (Nessie, Keycloak) with tables on S3', () => {
  let before: DispatchTruth;
  let contentBefore: { rows: number; checksum: string };
  let contentAfter: { rows: number; checksum: string };
  let clientSecret: string;
  let secrets: string[];
  let earlyToken: { token: string; lifetimeSeconds: number };
  let jobWindow: { from: number; to: number; seconds: number };
  let redis: Redis;
  /** The runner's state and the wrapper's records, read by the tests below. */
  const dir = tempDir('icepack-s3-runs-');
  const stateDir = join(dir, 'runs');
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
    await startOAuthCatalog();
    clientSecret = (await readFile(oauth.clientSecretFile, 'utf8')).trim();
    secrets = [clientSecret, accessKeyId, secretAccessKey];
    // The dispatcher's environment: S3 keys for the AWS chain (inherited by the fixture
    // build and by the job), the catalog's client secret under an allowed variable.
    process.env.AWS_ACCESS_KEY_ID = accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = secretAccessKey;
    process.env.AWS_REGION = 'us-east-1';
    // The dispatcher's Redis password and the variable its catalog secret is read from.
    process.env.ICEPACK_REDIS_PASSWORD = redisPassword;
    process.env[secretVariable] = clientSecret;
    before = (await dispatchTables([KEY], inNessie(clientSecret)))[KEY]!;
    dataBefore = await dataObjects(before);

    // The dispatcher's catalog: Nessie, tokens from Keycloak for the short-lived client.
    const catalog = catalogSchema.parse({
      name: catalogName,
      type: 'rest',
      uri: oauth.uri,
      warehouse: oauth.warehouse,
      auth: {
        type: 'oauth2',
        serverUri: oauth.tokenUri,
        clientId: oauth.shortTokenClientId,
        clientSecret: { env: secretVariable },
      },
      properties: s3Properties,
    });
    const resolveSecret = secretResolver(process.env, defaultCatalogAccessPolicy);

    // spark-submit behind a wrapper that records the argv and the environment it was
    // started with, and where Keycloak's log stood and the clock when the job started and
    // ended: the tokens issued in between are the job's (the dispatcher reads figures before
    // and after it, not during).
    argvFile = join(dir, 'argv.txt');
    envFile = join(dir, 'env.bin');
    const windowFile = join(dir, 'window.txt');
    const wrapper = join(dir, 'spark-submit');
    const realSubmit = join(infra.cacheDir, 'venv', 'bin', 'spark-submit');
    const mark = `echo "$(wc -c < '${oauth.issuerLog}') $(date +%s)" >> '${windowFile}'`;
    await writeFile(
      wrapper,
      `#!/bin/sh\nprintf '%s\\n' "$@" >> '${argvFile}'\nenv -0 > '${envFile}'\n${mark}\n'${realSubmit}' "$@"\ncode=$?\n${mark}\nexit $code\n`,
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
    // A token of the job's client taken now: it has expired by the time the job is done.
    earlyToken = await fetchToken(oauth.shortTokenClientId, clientSecret);
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
    const [start, end] = (await readFile(windowFile, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => line.split(' ').map(Number));
    jobWindow = { from: start![0]!, to: end![0]!, seconds: end![1]! - start![1]! };
    dataAfter = await dataObjects(before);
    contentBefore = await content(dataBefore);
    contentAfter = await content(dataAfter.filter((key) => !dataBefore.includes(key)));
  }, 1_800_000);

  afterAll(() => {
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
    // The dispatcher's before/after figures, read from S3 through Nessie with the catalog's
    // auth: 60 files → 1. Nessie serves only a table's current snapshot in its metadata (the
    // history is Nessie's commit log), so the count stays 1; the new file shows the commit.
    expect(done?.before).toMatchObject({ dataFiles: 60, snapshots: 1 });
    expect(done?.after).toMatchObject({ dataFiles: 1, snapshots: 1 });
    // The rewritten file is on S3: one more object under the table's location (the old files
    // stay until their snapshots expire), holding exactly the rows of the 60 before it.
    expect(dataBefore).toHaveLength(60);
    expect(dataAfter).toHaveLength(61);
    expect(contentBefore.rows).toBe(before.recordCount);
    expect(contentAfter).toEqual(contentBefore);
  });

  it("refreshes the job's token: the job outlived its first token and was issued more", async () => {
    // The client's tokens live shortTokenSeconds; the job ran longer, so it could only finish
    // (commit included) with refreshed tokens, and Nessie refuses an expired one.
    expect(earlyToken.lifetimeSeconds).toBe(oauth.shortTokenSeconds);
    expect(jobWindow.seconds).toBeGreaterThan(oauth.shortTokenSeconds);
    const expired = await fetch(`${oauth.uri}/v1/config?warehouse=${oauth.warehouse}`, {
      headers: { authorization: `Bearer ${earlyToken.token}` },
    });
    expect(expired.status).toBe(401);
    // Keycloak issued the job's client more than its first token while the job ran:
    // Iceberg's REST client fetched it with the credential and refreshed it by the same grant.
    expect(
      await tokensIssued(oauth.shortTokenClientId, jobWindow.from, jobWindow.to),
    ).toBeGreaterThanOrEqual(2);
  });

  it('keeps the secrets out of the argv, the run files and the task events', async () => {
    const argv = await readFile(argvFile, 'utf8');
    // The job did get its catalog's properties, as Spark conf.
    expect(argv).toContain(`spark.sql.catalog.${catalogName}.s3.endpoint=${infra.s3Endpoint}`);
    // …and how to fetch and refresh its own token (the secret half comes by the environment).
    expect(argv).toContain(`spark.sql.catalog.${catalogName}.oauth2-server-uri=${oauth.tokenUri}`);
    expect(argv).toContain(`spark.sql.catalog.${catalogName}.token-refresh-enabled=true`);
    expect(argv).toContain(`spark.sql.catalog.${catalogName}.token-exchange-enabled=false`);
    // …and asks for vended credentials, so Nessie turns its remote signing off (ADR 0037).
    expect(argv).toContain(
      `spark.sql.catalog.${catalogName}.header.X-Iceberg-Access-Delegation=vended-credentials`,
    );
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
    expect(env.get('ICEPACK_CATALOG_CREDENTIAL')).toBe(
      `${oauth.shortTokenClientId}:${clientSecret}`,
    );
    expect(env.get('AWS_ACCESS_KEY_ID')).toBe(accessKeyId);
    expect(env.has('PATH')).toBe(true);
    // Not the dispatcher's Redis password, nor the variable its catalog secret came from.
    expect(env.has('ICEPACK_REDIS_PASSWORD')).toBe(false);
    expect(env.has(secretVariable)).toBe(false);
    expect([...env.values()].some((value) => value.includes(redisPassword))).toBe(false);
  });
});
