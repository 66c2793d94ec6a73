import { sampleBinding, sampleMergeTask, sampleTableId, type CatalogAuth } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import {
  batchApplicationName,
  batchTaskList,
  CATALOG_CONFIG_DIR,
  JobSpecError,
  MAX_BATCH_TASKS,
  MAX_TASK_LIST_BYTES,
  operatorRunLocation,
  sparkApplication,
  sparkBatchApplication,
  type ApplicationOptions,
} from './spark-application.ts';
import type { BatchRunRequest, RunRequest } from './spark-runner.ts';

const options: ApplicationOptions = {
  image: 'icepack/spark:test',
  mainApplicationFile: 'local:///opt/icepack/jobs/spark/icepack_job.py',
  sparkVersion: '4.0.1',
  serviceAccount: 'icepack-spark',
  configMap: 'icepack-spark',
  timeToLiveSeconds: 86_400,
};

function request(auth: CatalogAuth, properties: Record<string, string> = {}): RunRequest {
  return {
    taskRun: 't@1',
    task: sampleMergeTask(),
    attempt: 1,
    binding: sampleBinding({ catalog: 'lake' }),
    size: {
      driver: { cores: 1, memory: '1024m', memoryBytes: 2 ** 30 },
      executor: { cores: 1, memory: '1024m', memoryBytes: 2 ** 30, instances: 1 },
      maxConcurrentFileGroupRewrites: 1,
      request: { cpuMillicores: 2000, memoryBytes: 2 ** 31 },
    },
    catalog: { name: 'lake', uri: 'http://catalog:8181', warehouse: 'wh', auth, properties },
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    timeoutMs: 60_000,
  };
}

interface Container {
  name: string;
  securityContext?: unknown;
  env?: unknown[];
  envFrom?: unknown[];
  volumeMounts?: unknown[];
}
interface Template {
  spec: { securityContext?: unknown; volumes?: unknown[]; containers: Container[] };
}
interface App {
  spec: {
    sparkConf: Record<string, string>;
    driver: { template: Template } & Record<string, unknown>;
    executor: { template: Template } & Record<string, unknown>;
  } & Record<string, unknown>;
}

const build = (req: RunRequest, opts: ApplicationOptions = options): App =>
  sparkApplication(req, opts) as unknown as App;

const restrictedContainer = {
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};
const restrictedPod = {
  runAsNonRoot: true,
  runAsUser: 185,
  runAsGroup: 185,
  fsGroup: 185,
  seccompProfile: { type: 'RuntimeDefault' },
};

describe('sparkApplication: what the pods carry (through the templates, not webhook fields)', () => {
  it('gives the driver and executor pod templates the Pod Security restricted context (ADR 0009)', () => {
    const app = build(request({ type: 'none' }));
    for (const [role, container] of [
      ['driver', 'spark-kubernetes-driver'],
      ['executor', 'spark-kubernetes-executor'],
    ] as const) {
      const template = app.spec[role].template;
      expect(template.spec.securityContext).toEqual(restrictedPod);
      expect(template.spec.containers).toHaveLength(1);
      expect(template.spec.containers[0]?.name).toBe(container);
      expect(template.spec.containers[0]?.securityContext).toEqual(restrictedContainer);
      // The webhook-only fields are not used: without the webhook they would be dropped.
      for (const field of ['securityContext', 'podSecurityContext', 'env', 'envFrom'])
        expect(app.spec[role][field], `${role}.${field}`).toBeUndefined();
    }
    expect(app.spec.sparkConfigMap).toBeUndefined();
  });

  it("mounts the provisioner's ConfigMap in the driver and puts the catalog's conf in sparkConf", () => {
    const app = build(
      request(
        { type: 'oauth2', clientSecret: { secret: { name: 'lake-oauth', key: 'secret' } } },
        { 'io-impl': 'org.apache.iceberg.aws.s3.S3FileIO' },
      ),
    );
    const spec = app.spec.driver.template.spec;
    expect(spec.volumes).toEqual([
      { name: 'icepack-catalog-config', configMap: { name: 'icepack-spark' } },
    ]);
    expect(spec.containers[0]?.volumeMounts).toEqual([
      { name: 'icepack-catalog-config', mountPath: CATALOG_CONFIG_DIR, readOnly: true },
    ]);
    expect(app.spec.sparkConf).toMatchObject({
      'spark.sql.catalog.lake': 'org.apache.iceberg.spark.SparkCatalog',
      'spark.sql.catalog.lake.type': 'rest',
      'spark.sql.catalog.lake.uri': 'http://catalog:8181',
      'spark.sql.catalog.lake.warehouse': 'wh',
      'spark.sql.catalog.lake.io-impl': 'org.apache.iceberg.aws.s3.S3FileIO',
    });
  });

  it('takes the credential only by Secret reference, the fallback Secret with envFrom, the trace context as a value', () => {
    const app = build(
      request({ type: 'bearer', token: { secret: { name: 'lake', key: 'tok' } } }),
      {
        ...options,
        secretName: 'lake-credentials',
      },
    );
    const container = app.spec.driver.template.spec.containers[0];
    expect(container?.env).toEqual([
      {
        name: 'ICEPACK_CATALOG_TOKEN',
        valueFrom: { secretKeyRef: { name: 'lake', key: 'tok' } },
      },
      { name: 'TRACEPARENT', value: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    ]);
    expect(container?.envFrom).toEqual([{ secretRef: { name: 'lake-credentials' } }]);
    // Nothing about the credential in the conf.
    expect(Object.keys(app.spec.sparkConf).filter((k) => /token|credential/.test(k))).toEqual([]);
  });

  it('refuses a credential a pod cannot reference, naming the field', () => {
    const req = request({ type: 'bearer', token: { env: 'ICEPACK_SECRET_LAKE' } });
    expect(() => build(req)).toThrow(JobSpecError);
    expect(() => build(req)).toThrow(/catalog auth\.token: .*variable ICEPACK_SECRET_LAKE/);
    // With the fallback Secret the job takes it from there.
    expect(() => build(req, { ...options, secretName: 'lake-credentials' })).not.toThrow();
  });
});

describe('operatorRunLocation', () => {
  it('names the application and how to read its driver pod log', () => {
    const loc = operatorRunLocation(
      'icepack-lake',
      'ip-merge-orders-0123456789ab-a1',
      'spark-operator',
    );
    expect(loc).toEqual({
      runner: 'spark-operator',
      runId: 'ip-merge-orders-0123456789ab-a1',
      application: { namespace: 'icepack-lake', name: 'ip-merge-orders-0123456789ab-a1' },
      logs: ['kubectl logs -n icepack-lake ip-merge-orders-0123456789ab-a1-driver'],
    });
  });
});

describe('sparkBatchApplication: one application for a batch of small tasks (ADR 0027)', () => {
  const tasks = ['orders', 'items', 'refunds'].map((name) =>
    sampleMergeTask({ table: sampleTableId({ catalog: 'lake', name }) }),
  );
  function batch(auth: CatalogAuth = { type: 'none' }): BatchRunRequest {
    const { binding, size, catalog, traceparent, timeoutMs } = request(auth);
    return {
      binding,
      size,
      catalog,
      timeoutMs,
      ...(traceparent === undefined ? {} : { traceparent }),
      batchRun: 'merge/lake/sales/orders@1',
      attempt: 2,
      tasks: tasks.map((task, i) => ({ taskRun: `${task.id}@${String(i)}`, task })),
    };
  }
  interface BatchApp extends App {
    metadata: {
      name: string;
      labels: Record<string, string>;
      annotations: Record<string, string>;
    };
  }
  const buildBatch = (req: BatchRunRequest): BatchApp =>
    sparkBatchApplication(req, options) as unknown as BatchApp;

  it('is named from (batch run, attempt), gives the task list in the arguments and no result directory', () => {
    const app = buildBatch(batch());
    const name = batchApplicationName({ batchRun: 'merge/lake/sales/orders@1', attempt: 2 });
    expect(name).toMatch(/^ip-batch-[0-9a-f]{12}-a2$/);
    expect(app.metadata.name).toBe(name);
    expect(app.metadata.labels).toMatchObject({
      'icepack.dev/run-id': name,
      'icepack.dev/task-type': 'batch',
      'icepack.dev/attempt': '2',
    });
    expect(app.metadata.annotations['icepack.dev/task-ids']?.split('\n')).toEqual(
      tasks.map((t) => t.id),
    );
    const args = app.spec.arguments as string[];
    const list = args[args.indexOf('--tasks-json') + 1];
    expect(JSON.parse(list ?? '')).toEqual(tasks);
    // The results come back in the termination message; the pod's disk outlives nothing.
    expect(args).not.toContain('--result-dir');
    expect(args).not.toContain('--task-json');
    expect(args[args.indexOf('--termination-log') + 1]).toBe('/dev/termination-log');
    // The same pods as a single run's: restricted, the ConfigMap mounted.
    expect(app.spec.driver.template.spec.securityContext).toEqual(restrictedPod);
  });

  it('carries no secret: the credential by Secret reference only, as a single run', () => {
    const app = buildBatch(
      batch({ type: 'bearer', token: { secret: { name: 'lake', key: 'tok' } } }),
    );
    expect(app.spec.driver.template.spec.containers[0]?.env).toContainEqual({
      name: 'ICEPACK_CATALOG_TOKEN',
      valueFrom: { secretKeyRef: { name: 'lake', key: 'tok' } },
    });
    expect(() =>
      buildBatch(batch({ type: 'bearer', token: { env: 'ICEPACK_SECRET_LAKE' } })),
    ).toThrow(JobSpecError);
  });

  it('bounds the task list by count and bytes: the tasks beyond are left out, never cut', () => {
    const many = Array.from({ length: MAX_BATCH_TASKS + 5 }, (_, i) =>
      sampleMergeTask({ table: sampleTableId({ name: `t${String(i)}` }) }),
    );
    const byCount = batchTaskList(many);
    expect(byCount.count).toBe(MAX_BATCH_TASKS);
    expect(JSON.parse(byCount.json)).toEqual(many.slice(0, MAX_BATCH_TASKS));

    const big = (name: string) =>
      sampleMergeTask({ table: sampleTableId({ name: `${name}${'x'.repeat(20_000)}` }) });
    const bySize = batchTaskList([big('a'), big('b'), big('c')]);
    expect(bySize.count).toBe(2);
    expect(Buffer.byteLength(bySize.json)).toBeLessThanOrEqual(MAX_TASK_LIST_BYTES);
    expect(
      (JSON.parse(bySize.json) as { table: { name: string } }[]).map((t) => t.table.name[0]),
    ).toEqual(['a', 'b']);
  });
});
