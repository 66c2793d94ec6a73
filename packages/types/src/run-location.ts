import { z } from 'zod';

/**
 * Where a running task attempt runs and where its logs are: what an operator needs to follow
 * it. Names and paths only, never a secret. The dispatcher writes it on the task's job
 * (`JOB_RUN_LOCATION_FIELD`) when the attempt starts.
 */
export const runLocationSchema = z.object({
  /** The runner's kind: `local` or `spark-operator`. */
  runner: z.string().min(1),
  /** The task events' `runId` of this attempt (run directory or SparkApplication name). */
  runId: z.string().min(1),
  /** Kubernetes runner: the SparkApplication's namespace and name. */
  application: z.object({ namespace: z.string().min(1), name: z.string().min(1) }).optional(),
  /** Where the logs are: files on the dispatcher's host, or how to read the driver pod's log. */
  logs: z.array(z.string().min(1)),
});
export type RunLocation = z.output<typeof runLocationSchema>;
