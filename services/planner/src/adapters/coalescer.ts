/**
 * Serves the calls made in one turn of the event loop with one batch call (issue 17 point 6).
 * A replica handles many table states at once (ADR 0052); their reads resolve from one Redis
 * reply, so their writes are made in the same turn. Each call still gets its own answer, and
 * the batch call must give the same answer per item as one call per item would: callers see
 * no difference but fewer commands (each command costs the Redis client's JS work, a promise
 * and a reply, whatever its size).
 *
 * The batch is sent on `process.nextTick` after its first call: after the promise callbacks
 * queued in that turn, so every continuation that a reply resumed has had its say. A batch
 * holds at most `maxItems`; the next call starts another. A failed batch call fails each of
 * its callers with the same error.
 *
 * Order: a call goes out at the end of its turn, so a command sent directly in the same turn
 * goes before it. Nothing in the planner relies on the other order: a table's states and its
 * tombstone are handled one after another, each step awaited; the console's actions and the
 * aging pass race with them as they did before (each write checks where the job is).
 */
export class Coalescer<I, O> {
  readonly #run: (items: readonly I[]) => Promise<readonly O[]>;
  readonly #maxItems: number;
  #items: I[] = [];
  #settles: { resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];

  constructor(run: (items: readonly I[]) => Promise<readonly O[]>, maxItems = 64) {
    if (!Number.isInteger(maxItems) || maxItems < 1)
      throw new Error('Coalescer: maxItems must be a whole number ≥ 1');
    this.#run = run;
    this.#maxItems = maxItems;
  }

  call(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      if (this.#items.length === 0) process.nextTick(() => this.#flush());
      this.#items.push(item);
      this.#settles.push({ resolve, reject });
      if (this.#items.length >= this.#maxItems) this.#flush();
    });
  }

  #flush(): void {
    const items = this.#items;
    const settles = this.#settles;
    if (items.length === 0) return; // sent already: it filled up
    this.#items = [];
    this.#settles = [];
    const answered = (outs: readonly O[]) => {
      if (outs.length !== items.length)
        throw new Error(`Coalescer: ${outs.length} answers for ${items.length} calls`);
      outs.forEach((o, i) => settles[i]!.resolve(o));
    };
    // A throw in `run` itself is its batch's failure too.
    Promise.resolve()
      .then(() => this.#run(items))
      .then(answered)
      .catch((error: unknown) => {
        for (const s of settles) s.reject(error);
      });
  }
}
