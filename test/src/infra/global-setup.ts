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

/**
 * `ICEPACK_TEST_INFRA` (developers only, e.g. `redis kafka catalog spark`): start only these
 * services of `infra.sh up`, so the files that need no Kubernetes run while its first Go build
 * (~20 min, an hour on a loaded machine) is still going. A test that needs a service left out
 * fails on its connection; `./dev test` and CI never set it: everything starts.
 */
export function infraSubset(env: NodeJS.ProcessEnv): string[] {
  return (env.ICEPACK_TEST_INFRA ?? '').split(/[\s,]+/).filter((s) => s !== '');
}

/** The local infrastructure could not be installed or started; the message names the logs. */
export class InfraStartError extends Error {
  override name = 'InfraStartError';
}

/**
 * Vitest global setup of the integration project: installs (first run only) and starts — or
 * reuses — Redis, Kafka with the Icepack topics, the REST catalog, Spark and the Kubernetes
 * control plane with the Spark operator (`inject('infra').kube`), through the same scripts
 * developers and CI use. On a fresh machine this waits for the Go build of Kubernetes, which
 * `./dev test` starts first of all. Anything that cannot start fails the run with its log path;
 * nothing is skipped. The services keep running afterwards, so the next run starts in seconds.
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
