import type { TestProject } from 'vitest/node';
import { infraEnv } from './env.ts';
import { runLocalScript } from './local-script.ts';
import type { InfraEnv } from './env.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the local infrastructure listens, as the global setup started it. */
    infra: InfraEnv;
  }
}

/** What `infra.sh up` starts for every integration file. */
export const GLOBAL_SERVICES = ['redis', 'kafka', 'catalog', 'spark'] as const;

/**
 * The services the global setup starts: Redis, Kafka, the REST catalog and Spark — not the
 * Kubernetes control plane, which each Kubernetes file starts once it holds its lane
 * (`lane-setup.ts`, `KUBERNETES_FILES` in lanes.ts): on a fresh machine its first Go build
 * (~30 min on two cores) goes on while every other file runs. `ICEPACK_TEST_INFRA`
 * (developers only, e.g. `redis kafka`) starts fewer; a test that needs a service left out
 * fails on its connection. `./dev test` and CI never set it.
 */
export function infraSubset(env: NodeJS.ProcessEnv): string[] {
  const named = (env.ICEPACK_TEST_INFRA ?? '').split(/[\s,]+/).filter((s) => s !== '');
  return named.length > 0 ? named : [...GLOBAL_SERVICES];
}

/** The local infrastructure could not be installed or started; the message names the logs. */
export class InfraStartError extends Error {
  override name = 'InfraStartError';
}

/**
 * Vitest global setup of the integration project: installs (first run only) and starts — or
 * reuses — Redis, Kafka with the Icepack topics, the REST catalog and Spark, through the same
 * scripts developers and CI use (the Kubernetes control plane comes later: `infraSubset`).
 * Anything that cannot start fails the run with its log path; nothing is skipped. The services
 * keep running afterwards, so the next run starts in seconds.
 */
export default async function setup(project: TestProject): Promise<void> {
  const up = await runLocalScript('infra.sh', ['up', ...infraSubset(process.env)]);
  if (up.code !== 0) {
    throw new InfraStartError(
      `deploy/local/infra.sh up failed (exit ${String(up.code)}):\n${up.output.trim()}`,
    );
  }
  console.log(up.output.trim());
  const env = infraEnv(process.env);
  // Child processes the tests spawn (spark-submit, python fixtures) find the jar this way.
  process.env.ICEPACK_SPARK_JARS = env.sparkJars;
  project.provide('infra', env);
}
