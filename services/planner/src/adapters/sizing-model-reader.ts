import type { Logger } from '@icepack/runtime';
import { sizingModelKey, sizingModelSchema, type SizingModel } from '@icepack/types';
import type { Redis } from 'ioredis';

/** A sizing-model value longer than this is not read (the dispatcher writes about 400 bytes). */
const MAX_VALUE_CHARS = 4_096;

export interface SizingModelReaderOptions {
  readonly connection: Redis;
  readonly logger: Logger;
}

/**
 * The sizing model a dispatcher publishes per catalog (`sizingModelKey`, ADR 0026), for the
 * planner API. Absent when no dispatcher serves the catalog (the value expires) or when the
 * value is too long or not a `SizingModel` (logged, naming the catalog): whoever can write
 * Redis cannot make the API answer something else.
 */
export class SizingModelReader {
  readonly #o: SizingModelReaderOptions;

  constructor(options: SizingModelReaderOptions) {
    this.#o = options;
  }

  async read(catalog: string): Promise<SizingModel | undefined> {
    const key = sizingModelKey(catalog);
    const value = await this.#o.connection.get(key);
    if (value === null) return undefined;
    let parsed: ReturnType<typeof sizingModelSchema.safeParse> | undefined;
    try {
      parsed =
        value.length <= MAX_VALUE_CHARS
          ? sizingModelSchema.safeParse(JSON.parse(value))
          : undefined;
    } catch {
      parsed = undefined;
    }
    // Another catalog's model under this key would be shown as this one's: refused too.
    if (parsed?.success === true && parsed.data.catalog === catalog) return parsed.data;
    this.#o.logger.warn({ catalog, key }, 'sizing model ignored: not a valid value');
    return undefined;
  }
}
