import {
  packedPartitionsJson,
  packPartitions,
  tableKey,
  tableStateSchema,
  unpackPartitions,
  type PackedPartitions,
  type TableState,
} from '@icepack/types';
import type { Redis } from 'ioredis';
import { RedisScript } from '@icepack/runtime';
import { Coalescer } from './coalescer.ts';

export interface TableStateStoreOptions {
  /** Shared ioredis connection. Required. */
  readonly connection: Redis;
  /** Hash: table key → latest TableState JSON, its partitions packed ({@link PackedPartitions}). Default `icepack:planner:table-states`. */
  readonly statesKey?: string;
  /** Set of catalogs seen (the aging pass walks their queues). Default `icepack:planner:catalogs`. */
  readonly catalogsKey?: string;
  /** Hash: table key → the latest state without its partitions ({@link TableStateStore.head}). Default `<statesKey>:heads`. */
  readonly headsKey?: string;
}

/**
 * A stored state without its partition list: what ordering the next state against it needs
 * (sequence number, scan time, metadata location, UUID), its properties and its figures.
 */
export type TableStateHead = Omit<TableState, 'partitions'>;

// KEYS[1] states, KEYS[2] heads, KEYS[3] catalogs; ARGV, five per state: table key, head
// JSON, the name of the partitions' member and its JSON, catalog. The whole state is the head
// without its closing brace, then the member: the head crosses the wire once, not twice
// (~1.9 KB of the ~15 KB a put sent), and the list goes as the message's bytes (issue 17).
const PUT_STATES = new RedisScript(`
for i = 1, #ARGV, 5 do
  redis.call('HSET', KEYS[1], ARGV[i],
    string.sub(ARGV[i + 1], 1, -2) .. ',"' .. ARGV[i + 2] .. '":' .. ARGV[i + 3] .. '}')
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
  redis.call('SADD', KEYS[3], ARGV[i + 4])
end
return 1
`);

/** What {@link PUT_STATES} takes of a state: its key, its head, its list's member, its catalog. */
function putArgs(state: TableState): (string | Buffer)[] {
  // The head (JSON leaves out a key whose value is undefined), and the whole state as the
  // head plus the partitions: the head is serialised and sent once.
  const head = JSON.stringify({ ...state, partitions: undefined });
  // A state from a version 2 message: its list as the message carried it, already packed
  // and serialised (ADR 0050) — from Kafka, a view of the message's bytes, which ioredis
  // copies into the command as they are (a string it would measure and encode again).
  const sent = packedPartitionsJson(state);
  const packed = sent === undefined ? packPartitions(state.partitions) : undefined;
  const [member, json] =
    sent !== undefined
      ? ['packedPartitions', sent]
      : packed === undefined
        ? ['partitions', JSON.stringify(state.partitions)]
        : ['packedPartitions', JSON.stringify(packed)];
  return [tableKey(state.table), head, member, json, state.table.catalog];
}

/** A stored state's JSON as a state: packed partitions unpacked, an older entry as it is. */
export function fromStored(raw: string): unknown {
  const stored = JSON.parse(raw) as Record<string, unknown> & {
    packedPartitions?: PackedPartitions;
  };
  if (stored.packedPartitions === undefined) return stored;
  const { packedPartitions, ...state } = stored;
  return { ...state, partitions: unpackPartitions(packedPartitions) };
}

/** The HSCAN pattern of a catalog's table keys (`tableKey` starts with the encoded catalog). */
function catalogMatch(catalog: string): string {
  const prefix = tableKey({ catalog, namespace: ['n'], name: 't' }).slice(0, -'n/t'.length);
  return `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
}

/**
 * The latest table state the planner acted on, per table, in Redis: any replica can order
 * the next state against it and answer `GET /v1/tables/{table}/plan`.
 */
export class TableStateStore {
  readonly #redis: Redis;
  readonly #statesKey: string;
  readonly #catalogsKey: string;
  readonly #headsKey: string;
  readonly #puts = new Coalescer<TableState, void>((states) => this.#putMany(states));

  constructor(options: TableStateStoreOptions) {
    this.#redis = options.connection;
    this.#statesKey = options.statesKey ?? 'icepack:planner:table-states';
    this.#catalogsKey = options.catalogsKey ?? 'icepack:planner:catalogs';
    this.#headsKey = options.headsKey ?? `${this.#statesKey}:heads`;
  }

  /** Its hashes: whole states, and their heads. */
  get keys(): { readonly states: string; readonly heads: string } {
    return { states: this.#statesKey, heads: this.#headsKey };
  }

  /** The stored state; written by this service, so parsed without re-validation. */
  async get(key: string): Promise<TableState | undefined> {
    const raw = await this.#redis.hget(this.#statesKey, key);
    return raw === null ? undefined : (fromStored(raw) as TableState);
  }

  /**
   * The stored state without its partitions, for ordering the next state of the table against
   * it: a tenth of the bytes of {@link get} for a state listing 100 partitions (issue 17).
   * A state stored before heads were is read whole.
   */
  async head(key: string): Promise<TableStateHead | undefined> {
    const raw = await this.#redis.hget(this.#headsKey, key);
    if (raw !== null) return JSON.parse(raw) as TableStateHead;
    return this.get(key);
  }

  /** Like {@link get}, validated (for the API, which must not serve a corrupted entry). */
  async getValidated(key: string): Promise<TableState | undefined> {
    const raw = await this.#redis.hget(this.#statesKey, key);
    return raw === null ? undefined : tableStateSchema.parse(fromStored(raw));
  }

  /**
   * Stores the state and its head together, atomically (never one without the other). A
   * script, not MULTI: an ioredis transaction copies every script BullMQ defined on the
   * shared connection, per state. The puts made in one turn go in one command
   * ({@link Coalescer}).
   */
  put(state: TableState): Promise<void> {
    return this.#puts.call(state);
  }

  async #putMany(states: readonly TableState[]): Promise<void[]> {
    await PUT_STATES.run(
      this.#redis,
      [this.#statesKey, this.#headsKey, this.#catalogsKey],
      states.flatMap(putArgs),
    );
    return states.map(() => undefined);
  }

  async delete(key: string): Promise<void> {
    await this.#redis.multi().hdel(this.#statesKey, key).hdel(this.#headsKey, key).exec();
  }

  /**
   * One page of stored states (HSCAN), of one catalog's tables when `catalog` is given: the next cursor (`'0'` when done) and the states.
   * A state stored or removed during a walk may or may not be seen, as HSCAN guarantees.
   */
  async page(
    cursor: string,
    count: number,
    catalog?: string,
  ): Promise<{ cursor: string; states: TableState[] }> {
    const [next, flat] =
      catalog === undefined
        ? await this.#redis.hscan(this.#statesKey, cursor, 'COUNT', count)
        : await this.#redis.hscan(
            this.#statesKey,
            cursor,
            'MATCH',
            catalogMatch(catalog),
            'COUNT',
            count,
          );
    const states: TableState[] = [];
    for (let i = 1; i < flat.length; i += 2) states.push(fromStored(flat[i]!) as TableState);
    return { cursor: next, states };
  }

  async catalogs(): Promise<string[]> {
    return this.#redis.smembers(this.#catalogsKey);
  }

  /** Removes its keys (tests). */
  async clear(): Promise<void> {
    await this.#redis.del(this.#statesKey, this.#headsKey, this.#catalogsKey);
  }
}
