import type { Logger } from '@icepack/runtime';
import { quotaUseKey, quotaUseSchema, type QuotaUse } from '@icepack/types';
import type { Redis } from 'ioredis';

/** A quota-use value longer than this is not read (the dispatcher writes about 250 bytes). */
const MAX_VALUE_CHARS = 4_096;

export interface QuotaUseReaderOptions {
  readonly connection: Redis;
  readonly logger: Logger;
}

/**
 * The resource groups' quota use the dispatchers publish (`quotaUseKey`), for the console's
 * overview. A catalog without a current value (no dispatcher serves it, or it stopped) is
 * absent; a value that is too long or not a `QuotaUse` is absent too and logged, naming the
 * catalog — whoever can write Redis cannot make the console show or render something else.
 */
export class QuotaUseReader {
  readonly #o: QuotaUseReaderOptions;

  constructor(options: QuotaUseReaderOptions) {
    this.#o = options;
  }

  async read(catalogs: readonly string[]): Promise<Map<string, QuotaUse>> {
    const found = new Map<string, QuotaUse>();
    if (catalogs.length === 0) return found;
    const values = await this.#o.connection.mget(catalogs.map(quotaUseKey));
    catalogs.forEach((catalog, i) => {
      const value = values[i];
      if (value === null || value === undefined) return;
      const parsed =
        value.length <= MAX_VALUE_CHARS ? quotaUseSchema.safeParse(safeJson(value)) : undefined;
      if (parsed?.success === true) found.set(catalog, parsed.data);
      else
        this.#o.logger.warn(
          { catalog, key: quotaUseKey(catalog) },
          'quota use ignored: not a valid value',
        );
    });
    return found;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
