import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteTopics, EnvelopeProducer, KafkaClient, createLogger } from '@icepack/runtime';
import { ServiceProcess } from '@icepack/runtime/testing';
import { Redis } from 'ioredis';
import { sparkSql, startNamespaceScopedCatalog } from '@icepack/test';
import {
  queueNameForCatalog,
  Topics,
  sampleBinding,
  sampleMergeTask,
  sampleTableId,
  tableKey,
  TaskEventTypes,
} from '@icepack/types';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { LocalCluster, startTestProvisioner } from '@icepack/provisioner/testing';
import type { ApiError } from '@icepack/provisioner/testing';
import { dispatcherEntry, sparkApplication, testBinding } from '@icepack/dispatcher/testing';
import { plannerEntry } from '@icepack/planner/testing';
import {
  cleanupTest,
  dropNamespaceTree,
  scannerEnv,
  startScanner,
  testNames,
  TopicReader,
} from '@icepack/metadata-scanner/testing';

// Known secrets go in where an operator or an attacker would put them; the four services
// carry a task from registration to a real Spark run, and every log line, Kafka message,
// BullMQ job and run file they produce is then searched for the values. The Kubernetes
// objects of a run with a Secret-held credential: operator-real.int.test.ts.

const infra = inject('infra');
const suffix = randomUUID().slice(0, 8);
const secrets = {
  token: `catalog-token-${suffix}`,
  header: `header-bearer-${suffix}`,
  azure: `azure-account-key-${suffix}`,
};
const tokenVar = `ICEPACK_SECRET_REDACTION_${suffix.toUpperCase()}`;
const names = testNames();
const catalog = `redact-${suffix}`;
const cleanups: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Task events that end a run. */
const ENDS: string[] = [TaskEventTypes.succeeded, TaskEventTypes.failed, TaskEventTypes.skipped];

function leaks(text: string): string[] {
  return Object.values(secrets).filter((value) => text.includes(value));
}

describe('known secrets through registration → Kafka → scanner → planner → a task the dispatcher runs', () => {
  it('reach no log line, no Kafka message, no BullMQ job, no run file and no Spark conf or argument', async () => {
    process.env[tokenVar] = secrets.token;
    cleanups.push(() => Promise.resolve(delete process.env[tokenVar]));
    const provisioner = await startTestProvisioner({
      infra,
      cluster: new LocalCluster({ allocatable: { cpuMillis: 4000, memoryBytes: 16 * 2 ** 30 } }),
    });
    cleanups.push(() => provisioner.stop());
    const catalogs = await TopicReader.start(infra.kafkaBrokers, Topics.catalogs);
    cleanups.push(() => catalogs.stop());

    // Credentials as catalog properties: refused, so they reach neither Kafka nor a ConfigMap.
    for (const [key, value] of [
      ['header.Authorization', `Bearer ${secrets.header}`],
      ['adls.auth.shared-key.account.key', secrets.azure],
      [`fs.azure.account.key.lake${suffix}.dfs.core.windows.net`, secrets.azure],
    ] as const) {
      const refused = await provisioner.api<ApiError>('POST', '/v1/catalogs', {
        name: `${catalog}-p`,
        type: 'rest',
        uri: infra.catalogUri,
        properties: { [key]: value },
      });
      expect(refused.status, key).toBe(400);
      expect(refused.body.fields?.map((f) => f.path)).toEqual([`properties["${key}"]`]);
      expect(leaks(JSON.stringify(refused.body))).toEqual([]);
    }

    // The credential by reference: published, the scanner resolves it and scans with it.
    // The catalog is the shared one seen through this test's namespace only, so the services
    // plan and run nothing on tables other test files left there.
    const scoped = await startNamespaceScopedCatalog({
      target: infra.catalogUri,
      namespace: names.id,
    });
    cleanups.push(() => scoped.close());
    const created = await provisioner.api('POST', '/v1/catalogs', {
      name: catalog,
      type: 'rest',
      uri: scoped.uri,
      auth: { type: 'bearer', token: { env: tokenVar } },
      probeCredentials: true,
    });
    expect(created.status).toBe(201);
    await catalogs.waitFor(() => catalogs.byKey(catalog).length > 0, 'the catalog on Kafka');

    const table = sampleTableId({ catalog, namespace: [names.id], name: 'orders' });
    // Three snapshots above a snapshot threshold of 1, and older than a 1 ms retention: the
    // planner queues a cleanup task.
    const sqlName = `h6.${names.id}.${table.name}`;
    await sparkSql(infra, 'h6', [
      `CREATE NAMESPACE IF NOT EXISTS h6.${names.id}`,
      `CREATE TABLE ${sqlName} (id BIGINT) USING iceberg TBLPROPERTIES ('format-version'='2', 'icepack.snapshot-threshold'='1', 'history.expire.max-snapshot-age-ms'='1')`,
      `INSERT INTO ${sqlName} VALUES (1)`,
      `INSERT INTO ${sqlName} VALUES (2)`,
      `INSERT INTO ${sqlName} VALUES (3)`,
    ]);
    cleanups.push(() => cleanupTest(infra, names));
    cleanups.push(() => dropNamespaceTree(infra.catalogUri, [names.id]));
    const scanner = await startScanner(
      scannerEnv(infra, names, {
        bootstrap: { catalogs: [], bindings: [catalog] },
        extra: {
          ICEPACK_SCANNER_CATALOGS_TOPIC: Topics.catalogs,
          ICEPACK_LOG_LEVEL: 'debug',
          [tokenVar]: secrets.token,
        },
      }),
    );
    cleanups.push(() => scanner.stop('SIGTERM'));
    // The scanner creates its topics at start.
    const states = await TopicReader.start(infra.kafkaBrokers, names.tableState);
    cleanups.push(() => states.stop());
    await states.waitFor(
      () => states.byKey(tableKey(table)).length > 0,
      'the scanned table on the table-state topic',
    );

    // The planner takes the state and queues a task in the catalog's BullMQ queue.
    const plannerGroup = `${names.id}-planner`;
    const plannerTopics = [`${names.id}.task-events`, `${names.id}.planner-dlq`];
    const planner = await ServiceProcess.start({
      entry: plannerEntry,
      env: {
        ICEPACK_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
        ICEPACK_REDIS_URL: infra.redisUrl,
        ICEPACK_API_TOKEN: `planner-token-${suffix}-0123456789`,
        ICEPACK_LOG_LEVEL: 'debug',
        ICEPACK_PLANNER_GROUP_ID: plannerGroup,
        ICEPACK_PLANNER_TABLE_STATE_TOPIC: names.tableState,
        ICEPACK_PLANNER_TASK_EVENTS_TOPIC: plannerTopics[0]!,
        ICEPACK_PLANNER_DLQ_TOPIC: plannerTopics[1]!,
      },
    });
    const redis = new Redis(infra.redisUrl);
    const queueKeys = `icepack:${queueNameForCatalog(catalog)}:*`;
    cleanups.push(async () => {
      const keys = await redis.keys(queueKeys);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      const logger = createLogger({ service: 'redaction-test', level: 'silent' });
      const kafka = new KafkaClient({ brokers: infra.kafkaBrokers, clientId: 'h6', logger });
      await deleteTopics(kafka, plannerTopics).catch(() => undefined);
      const admin = kafka.kafka.admin();
      await admin.connect();
      await admin.deleteGroups([plannerGroup]).catch(() => undefined);
      await admin.disconnect();
      await kafka.close();
    });
    cleanups.push(() => planner.stop('SIGTERM'));
    // Every hash of the catalog's queue: its jobs (data = the task) and its meta.
    const queueHashes = async (): Promise<string[]> => {
      const out: string[] = [];
      for (const key of await redis.keys(queueKeys)) {
        if ((await redis.type(key)) === 'hash') out.push(JSON.stringify(await redis.hgetall(key)));
      }
      return out;
    };
    let jobs: string[] = [];
    for (let i = 0; i < 600; i += 1) {
      jobs = await queueHashes();
      if (jobs.some((job) => job.includes('"data"') && job.includes(table.name))) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(
      jobs.some((job) => job.includes('"data"') && job.includes(table.name)),
      planner.describe(),
    ).toBe(true);

    // The dispatcher runs that task for real (local runner: a Spark job), with the catalog
    // credential in its environment, as the chart gives it.
    const bindingsTopic = `${names.id}.dispatcher-bindings`;
    const stateDir = await mkdtemp(join(tmpdir(), 'icepack-redaction-'));
    cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    const taskEvents = await TopicReader.start(infra.kafkaBrokers, Topics.taskEvents);
    cleanups.push(() => taskEvents.stop());
    const control = new KafkaClient({
      brokers: infra.kafkaBrokers,
      clientId: `h6-${suffix}`,
      logger: createLogger({ service: 'redaction-test', level: 'silent' }),
    });
    const controlProducer = new EnvelopeProducer(control);
    await controlProducer.connect();
    cleanups.push(async () => {
      await controlProducer.disconnect();
      await deleteTopics(control, [bindingsTopic]).catch(() => undefined);
      await control.close();
    });
    await controlProducer.publish(
      bindingsTopic,
      'BindingUpdated',
      catalog,
      testBinding(catalog, { slots: 1 }),
    );
    const dispatcher = await ServiceProcess.start({
      entry: dispatcherEntry,
      env: {
        ICEPACK_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
        ICEPACK_REDIS_URL: infra.redisUrl,
        ICEPACK_LOG_LEVEL: 'debug',
        ICEPACK_DISPATCHER_CATALOGS_TOPIC: Topics.catalogs,
        ICEPACK_DISPATCHER_BINDINGS_TOPIC: bindingsTopic,
        ICEPACK_DISPATCHER_CATALOGS: catalog,
        ICEPACK_DISPATCHER_STATE_DIR: stateDir,
        ICEPACK_SPARK_JARS: infra.sparkJars,
        ICEPACK_LOCAL_CATALOGS: '*',
        [tokenVar]: secrets.token,
      },
    });
    cleanups.push(() => dispatcher.stop('SIGTERM'));
    const ended = await taskEvents
      .waitFor(
        (messages) =>
          messages.find(
            (m) =>
              m.key === tableKey(table) &&
              ENDS.includes(String((m.value as { type?: string } | null)?.type)),
          ),
        'the task run by the dispatcher to end',
        240_000,
      )
      .catch(async (error: unknown) => {
        const keys = await redis.keys(queueKeys);
        const shapes = await Promise.all(
          keys.map(async (key) => `${key} ${await redis.type(key)}`),
        );
        const own = dispatcher.lines.filter((line) => line.component !== 'kafkajs');
        throw new Error(
          `${String(error)}\nqueue keys:\n${shapes.join('\n')}\n${own
            .slice(-40)
            .map((line) => JSON.stringify(line))
            .join('\n')}\n${dispatcher.stderr.slice(-20).join('\n')}`,
        );
      });
    // Everything the run left: its directory (launch line, Spark's output, the result).
    const runFiles: string[] = [];
    for (const entry of await readdir(stateDir, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) runFiles.push(await readFile(join(entry.parentPath, entry.name), 'utf8'));
    }
    expect(runFiles.length, 'the run directory').toBeGreaterThan(0);
    const runOutput = [
      ...dispatcher.lines.map((line) => JSON.stringify(line)),
      ...dispatcher.stderr,
      ...taskEvents.byKey(tableKey(table)).map((m) => JSON.stringify(m)),
      ...(await queueHashes()),
      ...runFiles,
    ];
    expect(JSON.stringify(ended)).toContain(table.name);
    expect(runOutput.flatMap(leaks)).toEqual([]);

    const dispatcherConf = sparkApplication(
      {
        taskRun: `t@${suffix}`,
        task: sampleMergeTask({ table }),
        attempt: 1,
        binding: sampleBinding({ catalog }),
        size: {
          driver: { cores: 1, memory: '1024m', memoryBytes: 2 ** 30 },
          executor: { cores: 1, memory: '1024m', memoryBytes: 2 ** 30, instances: 1 },
          maxConcurrentFileGroupRewrites: 1,
          request: { cpuMillicores: 2000, memoryBytes: 2 ** 31 },
        },
        catalog: { name: catalog, uri: infra.catalogUri, secretEnv: [tokenVar] },
        timeoutMs: 60_000,
      },
      {
        image: 'icepack/spark:test',
        mainApplicationFile: 'local:///opt/icepack/icepack_job.py',
        sparkVersion: '4.0.1',
        serviceAccount: 'icepack-spark',
        configMap: 'icepack-spark',
        secretName: 'lake-credentials',
        timeToLiveSeconds: 86_400,
      },
    ) as { spec: { sparkConf: Record<string, string> } };

    const produced = [
      ...jobs,
      ...planner.lines.map((line) => JSON.stringify(line)),
      ...planner.stderr,
      ...scanner.lines.map((line) => JSON.stringify(line)),
      ...scanner.stderr,
      ...catalogs.byKey(catalog).map((m) => JSON.stringify(m)),
      ...catalogs.byKey(`${catalog}-p`).map((m) => JSON.stringify(m)),
      ...states.messages.map((m) => JSON.stringify(m)),
      JSON.stringify(dispatcherConf),
    ];
    expect(scanner.lines.length).toBeGreaterThan(0);
    expect(produced.flatMap(leaks)).toEqual([]);
    expect(catalogs.byKey(`${catalog}-p`)).toEqual([]);

    // Spark redacts the credential the job sets (`spark.sql.catalog.<name>.credential`),
    // which Spark's default pattern does not match.
    const regex = dispatcherConf.spec.sparkConf['spark.redaction.regex'] ?? '';
    const javaLike = new RegExp(regex.replace(/^\(\?i\)/, ''), 'i');
    for (const key of [
      `spark.sql.catalog.${catalog}.credential`,
      `spark.sql.catalog.${catalog}.token`,
      `spark.sql.catalog.${catalog}.header.Authorization`,
      'spark.hadoop.fs.azure.account.key.lake.dfs.core.windows.net',
    ])
      expect(javaLike.test(key), key).toBe(true);
  }, 600_000);
});
