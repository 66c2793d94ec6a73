// Dispatcher workers as processes of their own (`worker-process.ts`), for the tests that kill
// one mid-dispatch and start another: started, logged and killed the same way everywhere.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { resolve } from 'node:path';

const workerScript = resolve(import.meta.dirname, 'worker-process.ts');

/** The worker processes a test started (killed in its `afterAll`) and where they log. */
export class WorkerProcesses {
  readonly children = new Set<ChildProcess>();
  readonly #log: string;
  readonly #base: Record<string, unknown>;

  /** `base`: the config every worker of the test shares; `log`: a file for their output. */
  constructor(log: string, base: Record<string, unknown>) {
    this.#log = log;
    this.#base = base;
  }

  /** Starts a worker process with `config` over the base; resolves once it takes tasks. */
  start(config: Record<string, unknown>): Promise<ChildProcess> {
    const child = spawn(process.execPath, [workerScript], {
      env: {
        ...process.env,
        ICEPACK_TEST_WORKER: JSON.stringify({ ...this.#base, ...config }),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.children.add(child);
    child.on('exit', (code, signal) =>
      appendFileSync(this.#log, `worker ${String(child.pid)} exited ${String(code ?? signal)}\n`),
    );
    return new Promise((ok, fail) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        appendFileSync(this.#log, chunk);
        if (chunk.toString().includes('ready')) ok(child);
      });
      child.on('exit', (code) => fail(new Error(`worker exited ${String(code)} before ready`)));
    });
  }

  /** Kills every worker still running; resolves once they exited (and logged their exit). */
  async killAll(): Promise<void> {
    const running = [...this.children].filter((c) => c.exitCode === null && c.signalCode === null);
    await Promise.all(
      running.map(
        (child) =>
          new Promise<void>((ok) => {
            child.once('exit', () => ok());
            child.kill('SIGKILL');
          }),
      ),
    );
  }
}
