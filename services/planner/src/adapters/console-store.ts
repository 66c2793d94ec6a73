import { tableKey, type TableId } from '@icepack/types';
import type { Redis } from 'ioredis';

/** Who paused a table or catalog from the console, and when. */
export interface PauseRecord {
  readonly by: string;
  readonly at: string;
}

/** A table's console pauses: its own and its catalog's (either stops its planning). */
export interface TablePauses {
  readonly table?: PauseRecord;
  readonly catalog?: PauseRecord;
}

export type PauseScope = 'table' | 'catalog';

/** One console action, as the audit log keeps it. */
export interface AuditEntry {
  readonly at: string;
  readonly user: string;
  readonly action: string;
  readonly target: string;
  readonly outcome: string;
}

/** A task that failed, as the queue page lists it. */
export interface RecentFailure {
  readonly taskId: string;
  readonly tableKey: string;
  readonly type: string;
  readonly at: string;
  readonly reason: string;
}

export interface ConsoleStoreOptions {
  readonly connection: Redis;
  /** Key prefix. Default `icepack:planner:console`. */
  readonly prefix?: string;
  /** Audit entries kept (approximately, XADD MAXLEN ~). Default 10,000. */
  readonly auditMax?: number;
  /** Failures kept per catalog. Default 50. */
  readonly failuresMax?: number;
}

/**
 * The console's own state in Redis, shared by every planner replica: the pauses (a hash,
 * field `table:<key>` or `catalog:<name>`), the audit log (a capped stream) and each
 * catalog's recent failures (a capped list).
 */
export class ConsoleStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #auditMax: number;
  readonly #failuresMax: number;

  constructor(options: ConsoleStoreOptions) {
    this.#redis = options.connection;
    this.#prefix = options.prefix ?? 'icepack:planner:console';
    this.#auditMax = options.auditMax ?? 10_000;
    this.#failuresMax = options.failuresMax ?? 50;
  }

  get #pauses(): string {
    return `${this.#prefix}:pauses`;
  }

  /** One round trip: the table's and its catalog's pause. */
  async pausesOf(table: TableId): Promise<TablePauses> {
    const [own, catalog] = await this.#redis.hmget(
      this.#pauses,
      `table:${tableKey(table)}`,
      `catalog:${table.catalog}`,
    );
    return {
      ...(own == null ? {} : { table: JSON.parse(own) as PauseRecord }),
      ...(catalog == null ? {} : { catalog: JSON.parse(catalog) as PauseRecord }),
    };
  }

  /** Every pause, by field (`table:<key>`, `catalog:<name>`). */
  async allPauses(): Promise<Map<string, PauseRecord>> {
    const all = await this.#redis.hgetall(this.#pauses);
    return new Map(Object.entries(all).map(([k, v]) => [k, JSON.parse(v) as PauseRecord]));
  }

  /** True if this call paused it (false: it was paused already, the first record stays). */
  async pause(scope: PauseScope, name: string, record: PauseRecord): Promise<boolean> {
    return (
      (await this.#redis.hsetnx(this.#pauses, `${scope}:${name}`, JSON.stringify(record))) === 1
    );
  }

  /** True if it was paused. */
  async resume(scope: PauseScope, name: string): Promise<boolean> {
    return (await this.#redis.hdel(this.#pauses, `${scope}:${name}`)) === 1;
  }

  async audit(entry: AuditEntry): Promise<void> {
    await this.#redis.xadd(
      `${this.#prefix}:audit`,
      'MAXLEN',
      '~',
      this.#auditMax,
      '*',
      'entry',
      JSON.stringify(entry),
    );
  }

  /** The newest audit entries first. */
  async auditLog(limit: number): Promise<AuditEntry[]> {
    const rows = await this.#redis.xrevrange(`${this.#prefix}:audit`, '+', '-', 'COUNT', limit);
    return rows.map(([, fields]) => JSON.parse(fields[1] ?? '{}') as AuditEntry);
  }

  async recordFailure(catalog: string, failure: RecentFailure): Promise<void> {
    const key = `${this.#prefix}:failures:${catalog}`;
    await this.#redis
      .multi()
      .lpush(key, JSON.stringify(failure))
      .ltrim(key, 0, this.#failuresMax - 1)
      .exec();
  }

  /** The newest first. */
  async failures(catalog: string): Promise<RecentFailure[]> {
    const raw = await this.#redis.lrange(`${this.#prefix}:failures:${catalog}`, 0, -1);
    return raw.map((r) => JSON.parse(r) as RecentFailure);
  }

  /** Removes every key (tests). */
  async clear(catalogs: readonly string[] = []): Promise<void> {
    await this.#redis.del(
      this.#pauses,
      `${this.#prefix}:audit`,
      ...catalogs.map((c) => `${this.#prefix}:failures:${c}`),
    );
  }
}
