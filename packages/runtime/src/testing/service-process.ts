import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parsePrometheusText, sumSamples } from './prometheus-text.ts';

export interface ServiceProcessOptions {
  /** Path of the service's `main.ts`. Required. */
  readonly entry: string;
  /** Environment on top of this process's; `ICEPACK_HTTP_PORT=0` and host 127.0.0.1 are set. */
  readonly env: Readonly<Record<string, string>>;
  /** How long to wait for the HTTP server to listen. Default 30 000 ms. */
  readonly startTimeoutMs?: number;
}

export interface ReadyzResponse {
  readonly status: number;
  readonly body: {
    status: string;
    failing: string[];
    checks: Record<string, { ok: boolean; detail?: string }>;
  };
}

/**
 * A service run as its own Node process, as in production: for tests that check start-up,
 * readiness and graceful shutdown from the outside. Its JSON log lines are collected.
 */
export class ServiceProcess {
  readonly lines: Record<string, unknown>[] = [];
  readonly stderr: string[] = [];
  readonly #child: ChildProcess;
  readonly #exit: Promise<number | null>;
  #port = 0;

  private constructor(child: ChildProcess) {
    this.#child = child;
    this.#exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static async start(options: ServiceProcessOptions): Promise<ServiceProcess> {
    const child = spawn(process.execPath, [options.entry], {
      env: {
        ...process.env,
        ...options.env,
        ICEPACK_HTTP_PORT: '0',
        ICEPACK_HTTP_HOST: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const service = new ServiceProcess(child);
    createInterface({ input: child.stderr }).on('line', (line) => service.stderr.push(line));
    const listening = new Promise<number>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          service.lines.push(entry);
          if (entry.msg === 'http server listening') resolve(Number(entry.port));
        } catch {
          service.stderr.push(`(stdout, not JSON) ${line}`);
        }
      });
      void service.#exit.then((code) =>
        reject(
          new Error(`service exited with ${String(code)} before listening:\n${service.describe()}`),
        ),
      );
      setTimeout(
        () => reject(new Error(`service did not listen in time:\n${service.describe()}`)),
        options.startTimeoutMs ?? 30_000,
      ).unref();
    });
    try {
      service.#port = await listening;
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    return service;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  async readyz(): Promise<ReadyzResponse> {
    const response = await fetch(`${this.url}/readyz`);
    return { status: response.status, body: (await response.json()) as ReadyzResponse['body'] };
  }

  /**
   * Sum of the samples of a metric on `GET /metrics` (Prometheus names: `…_total` for
   * counters) whose labels include `labels`; 0 when there are none yet.
   */
  async metric(name: string, labels: Readonly<Record<string, string>> = {}): Promise<number> {
    const response = await fetch(`${this.url}/metrics`);
    if (!response.ok) throw new Error(`GET /metrics answered ${String(response.status)}`);
    return sumSamples(parsePrometheusText(await response.text()), name, labels);
  }

  /** Polls `/readyz` until `predicate` holds for a response. */
  async waitForReadyz(
    predicate: (response: ReadyzResponse) => boolean,
    timeoutMs = 60_000,
  ): Promise<ReadyzResponse> {
    const deadline = Date.now() + timeoutMs;
    let last: ReadyzResponse | undefined;
    while (Date.now() < deadline) {
      last = await this.readyz();
      if (predicate(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`readyz never matched; last: ${JSON.stringify(last)}\n${this.describe()}`);
  }

  /** Sends `signal` and resolves with the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.#child.exitCode === null) this.#child.kill(signal);
    return this.#exit;
  }

  /** Last log lines and stderr, for failure messages. */
  describe(): string {
    return [
      ...this.lines.slice(-20).map((line) => JSON.stringify(line)),
      ...this.stderr.slice(-20),
    ].join('\n');
  }
}
