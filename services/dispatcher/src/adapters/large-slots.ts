import type { Redis } from 'ioredis';
import type { Binding } from '@icepack/types';
import { LeasedClaims } from './leased-claims.ts';

/**
 * The large-task slots of each catalog (ADR 0029): a large task runs only while it holds one,
 * and a catalog has `binding.slots` of them across all dispatchers, so its `smallSlots` stay
 * for small tasks. Held per run like a quota claim, renewed while the run goes on, released
 * when its end is known.
 */
export interface LargeSlotGate {
  /** Takes a slot for the run if fewer than `slots` other large runs hold one; idempotent. */
  admit(binding: Binding, claimId: string): Promise<boolean>;
  /** Records the slot of a run that runs already (re-attached after a restart), even past `slots`. */
  hold(binding: Binding, claimId: string): Promise<void>;
  renew(binding: Binding, claimId: string): Promise<void>;
  release(binding: Binding, claimId: string): Promise<void>;
  /** Large runs holding a slot now. */
  inUse(binding: Binding): Promise<number>;
}

export interface RedisLargeSlotsOptions {
  readonly redis: Redis;
  /** Key prefix. Default `icepack`. */
  readonly prefix?: string;
  /** A slot lapses this long after its last renewal (a crashed dispatcher's). Default 10 min. */
  readonly leaseMs?: number;
}

/** Large-task slots as leased claims of 1 in a Redis hash per catalog. */
export class RedisLargeSlots implements LargeSlotGate {
  readonly #claims: LeasedClaims;
  readonly #prefix: string;

  constructor(options: RedisLargeSlotsOptions) {
    this.#claims = new LeasedClaims({
      redis: options.redis,
      leaseMs: options.leaseMs ?? 10 * 60_000,
    });
    this.#prefix = options.prefix ?? 'icepack';
  }

  #key(binding: Binding): string {
    return `${this.#prefix}:large-slots:${binding.catalog}`;
  }

  async admit(binding: Binding, claimId: string): Promise<boolean> {
    return (await this.#claims.claim(this.#key(binding), claimId, [1], [binding.slots])).held;
  }

  hold(binding: Binding, claimId: string): Promise<void> {
    return this.#claims.hold(this.#key(binding), claimId, [1]);
  }

  renew(binding: Binding, claimId: string): Promise<void> {
    return this.#claims.renew(this.#key(binding), claimId);
  }

  release(binding: Binding, claimId: string): Promise<void> {
    return this.#claims.release(this.#key(binding), claimId);
  }

  async inUse(binding: Binding): Promise<number> {
    const [count = 0] = await this.#claims.used(this.#key(binding), 1);
    return count;
  }
}
