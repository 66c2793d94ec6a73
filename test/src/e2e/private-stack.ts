import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../infra/free-port.ts';
import { runLocalScript } from '../infra/local-script.ts';

/** A deploy/local script failed; the message carries its output. */
export class StackScriptError extends Error {
  override name = 'StackScriptError';
}

/**
 * Redis, Kafka and the REST catalog of this test alone, started by the same deploy/local
 * scripts as the shared stack but on their own ports and state directory. The end-to-end
 * test stops and starts Kafka and Redis and lets the services maintain every table of its
 * catalog: on the shared stack that would disturb other tests. Spark (a venv and a jar) is
 * shared; it has no server.
 */
export class PrivateStack {
  readonly runDir: string;
  readonly env: Readonly<Record<string, string>>;
  readonly redisUrl: string;
  readonly kafkaBrokers: readonly string[];
  readonly catalogUri: string;

  private constructor(runDir: string, ports: Record<string, number>) {
    this.runDir = runDir;
    this.env = {
      ICEPACK_RUN: runDir,
      ICEPACK_REDIS_PORT: String(ports.redis),
      ICEPACK_KAFKA_PORT: String(ports.kafka),
      ICEPACK_KAFKA_CONTROLLER_PORT: String(ports.controller),
      ICEPACK_KAFKA_SASL_PORT: String(ports.sasl),
      ICEPACK_CATALOG_PORT: String(ports.catalog),
    };
    this.redisUrl = `redis://127.0.0.1:${String(ports.redis)}`;
    this.kafkaBrokers = [`127.0.0.1:${String(ports.kafka)}`];
    this.catalogUri = `http://127.0.0.1:${String(ports.catalog)}`;
  }

  static async start(): Promise<PrivateStack> {
    const runDir = await mkdtemp(join(tmpdir(), 'icepack-e2e-'));
    const ports = {
      redis: await freePort(),
      kafka: await freePort(),
      controller: await freePort(),
      // Every port of the broker: its SASL listener too, else it collides with the shared one.
      sasl: await freePort(),
      catalog: await freePort(),
    };
    const stack = new PrivateStack(runDir, ports);
    await stack.script('infra.sh', 'up', 'redis', 'kafka', 'catalog');
    return stack;
  }

  /** `deploy/local/<script> <args>` against this stack; rejects with its output on failure. */
  async script(script: string, ...args: string[]): Promise<string> {
    const { code, output } = await runLocalScript(script, args, this.env);
    if (code !== 0)
      throw new StackScriptError(`${script} ${args.join(' ')} exited ${String(code)}:\n${output}`);
    return output;
  }

  stop(): Promise<string> {
    return this.script('infra.sh', 'down', 'redis', 'kafka', 'catalog');
  }
}
