import type { Task } from '@icepack/types';
import { sizeJob } from '../../domain/sizing.ts';
import { SPARK_API, sparkApplication } from '../../runners/spark-application.ts';
import { testBinding } from './test-binding.ts';

type Shape = (name: string) => Record<string, unknown>;
type Spec = Record<string, Record<string, unknown>>;

/**
 * SparkApplication objects of one task in a few shapes, for measuring what a create costs the
 * API server by shape (bench/dispatcher/create-cost.ts): `current` is exactly what the runner
 * creates; the others take parts away to show what each part costs — they are not objects the
 * runner could use as they are.
 */
export function applicationShapes(task: Task, namespace: string): Record<string, Shape> {
  const binding = { ...testBinding('benchc0', { runner: 'spark-operator' }), namespace };
  const size = sizeJob({
    bytes: task.state.bytesToRewrite,
    files: task.state.filesToRewrite,
    minInputFiles: 2,
    spark: binding.spark,
    room: {},
  }).size;
  const build = (t: Task): Record<string, unknown> =>
    sparkApplication(
      {
        taskRun: `${t.id}@1`,
        task: t,
        attempt: 1,
        binding,
        size,
        catalog: { name: binding.catalog, uri: 'http://127.0.0.1:1' },
        timeoutMs: 60_000,
      },
      {
        image: 'ghcr.io/icepack/spark-job:latest',
        mainApplicationFile: 'local:///opt/icepack/jobs/spark/icepack_job.py',
        sparkVersion: '4.0.1',
        serviceAccount: 'icepack-spark',
        configMap: 'icepack-spark',
        timeToLiveSeconds: 86_400,
      },
    );
  const named = (app: Record<string, unknown>, name: string) => ({
    ...app,
    metadata: { ...(app.metadata as object), name },
  });
  const current = build(task);
  const spec = current.spec as Spec;
  const withoutTemplates: Record<string, unknown> = {
    ...current,
    spec: {
      ...spec,
      driver: { ...spec.driver, template: undefined },
      executor: { ...spec.executor, template: undefined },
    },
  };
  const taskWithoutScore: Partial<Task> = { ...task };
  delete taskWithoutScore.score;
  const withoutScore = build(taskWithoutScore as Task);
  const bare = {
    apiVersion: `${SPARK_API.group}/${SPARK_API.version}`,
    kind: 'SparkApplication',
    metadata: { namespace },
    spec: {
      type: 'Python',
      mode: 'cluster',
      image: spec.image,
      mainApplicationFile: spec.mainApplicationFile,
      sparkVersion: spec.sparkVersion,
      driver: { cores: 1, memory: '1g' },
      executor: { cores: 1, instances: 1, memory: '1g' },
    },
  };
  return {
    current: (name) => named(current, name),
    'without pod templates': (name) =>
      named(JSON.parse(JSON.stringify(withoutTemplates)) as Record<string, unknown>, name),
    'task JSON without score': (name) => named(withoutScore, name),
    'bare (lower bound)': (name) => named(bare, name),
  };
}
