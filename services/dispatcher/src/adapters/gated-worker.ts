import { Worker, type Job, type Processor, type WorkerOptions } from 'bullmq';
import type { LaunchGate, LaunchPermit } from '../domain/launch-gate.ts';

/**
 * A BullMQ worker that takes a job off the queue only with a permit of the process's
 * {@link LaunchGate} (ADR 0040). The processor gives the permit back early once the run is
 * submitted (`launchPermit(token).release()`); it is given back in any case when the job's
 * processing ends.
 *
 * It leans on two BullMQ 6.7 internals, both checked by gated-worker.int.test.ts (a BullMQ
 * upgrade that changes them fails it):
 * - every job reaches `active` through the protected `moveToActive`, except the one
 *   `moveToCompleted`/`moveToFailed` fetch along when `processJob`'s `fetchNextCallback`
 *   says so: it always says no here, so each fetch passes the gate (one more Redis round
 *   trip per job, nothing beside a Spark run);
 * - BullMQ's loop fetches jobs one after another and hands them to `processJob` only after
 *   the fetching stops: a fetch must not wait for a permit while a job this worker took
 *   still waits to be processed (it holds a permit: the gate could close on itself). Such a
 *   fetch returns no job, which ends BullMQ's fetching round.
 */
export class GatedWorker extends Worker {
  readonly #gate: LaunchGate;
  /** Permits of the jobs this worker took, by their BullMQ token (one per fetch). */
  readonly #permits = new Map<string, LaunchPermit>();
  /** Jobs taken and not yet handed to `processJob`. */
  #taken = 0;
  /** Aborted by `close`: a fetch waiting for a permit gives up. */
  readonly #closing = new AbortController();

  constructor(name: string, processor: Processor, options: WorkerOptions, gate: LaunchGate) {
    // Not started by the base constructor: it would fetch before this class's fields exist.
    super(name, processor, { ...options, autorun: false });
    this.#gate = gate;
    this.run().catch((error: unknown) => this.emit('error', error as Error));
  }

  /** The permit of the job taken with `token`, while its processing holds it. */
  launchPermit(token: string | undefined): LaunchPermit | undefined {
    return token === undefined ? undefined : this.#permits.get(token);
  }

  /**
   * A new permit for the job taken with `token`, once it has given its own back: the retry of
   * a run whose state was unknown (its back-off held none, ADR 0040) launches again, so it
   * waits its turn like any launch. Given back as the first one: at submission, or when the
   * job's processing ends. Not aborted by `close`: the run may be going on and is followed
   * to its end, and a permit comes back as soon as some launch in flight is submitted.
   */
  async relaunchPermit(token: string): Promise<LaunchPermit> {
    const permit = await this.#gate.acquire();
    this.#permits.set(token, permit);
    return permit;
  }

  protected override async moveToActive(token: string, name?: string): Promise<Job> {
    let permit = this.#gate.tryAcquire();
    if (permit === undefined) {
      if (this.#taken > 0) return undefined as unknown as Job;
      permit = await this.#gate.acquire(this.#closing.signal);
      if (permit === undefined) return undefined as unknown as Job;
    }
    try {
      // Typed as always a job; it is undefined when the queue had none for us.
      const job = (await super.moveToActive(token, name)) as Job | undefined;
      if (job === undefined) permit.release();
      else {
        this.#permits.set(token, permit);
        this.#taken += 1;
      }
      return job as Job;
    } catch (error) {
      permit.release();
      throw error;
    }
  }

  override async processJob(
    job: Job,
    token: string,
    _fetchNext?: () => boolean,
  ): Promise<void | Job> {
    this.#taken -= 1;
    try {
      // Never fetch the next job along with this one's end: that would bypass the gate.
      return await super.processJob(job, token, () => false);
    } finally {
      this.#permits.get(token)?.release();
      this.#permits.delete(token);
    }
  }

  override close(force = false): Promise<void> {
    this.#closing.abort();
    return super.close(force);
  }
}
