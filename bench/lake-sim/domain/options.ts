/** The simulator's command line, checked: `./dev bench lake-sim --minutes 30 --policy icepack`. */

export const Policies = ['none', 'cron', 'icepack'] as const;
export type Policy = (typeof Policies)[number];

/** Where the lake's files live: this machine's disk, or an S3 store (issue 20). */
export const Storages = ['local', 's3'] as const;
export type Storage = (typeof Storages)[number];

export interface SimOptions {
  /** Writing time (the schedule); setup, settling and the final checks come on top. */
  readonly minutes: number;
  /** One or more policies, run one after the other on the same workload and seed. */
  readonly policies: readonly Policy[];
  readonly seed: number;
  /** The cron baseline's interval (what a team would set by hand): 10 minutes. */
  readonly cronMinutes: number;
  /** The lake's snapshot retention (`history.expire.max-snapshot-age-ms` of every table). */
  readonly retentionMinutes: number;
  /** Query probe and delete-file checkpoints. */
  readonly probeEveryMinutes: number;
  /** How often every table's files and snapshots are sampled (REST catalog, no Spark). */
  readonly sampleSeconds: number;
  /** Write rate multiplier (2 = twice as many commits per minute). */
  readonly load: number;
  /** With Icepack: how long to wait, after the writers stop, for its queue to drain. */
  readonly settleMinutes: number;
  /**
   * At most this many tables of each kind (the lake has 8 stream, 6 CDC, 6 batch, 2 evolving
   * and 2 tagged tables); fewer keeps every writer kind at a fraction of the cost.
   */
  readonly maxPerKind: number;
  /**
   * `local`: the simulator's REST catalog keeps the tables on this machine's disk. `s3`: a
   * REST catalog of its own whose warehouse is on an S3 store of its own (moto).
   */
  readonly storage: Storage;
  /**
   * With Icepack: the dispatcher's resident-session idle bound (ADR 0046,
   * `ICEPACK_DISPATCHER_SESSION_IDLE_SECONDS`); 0, the default, leaves the dispatcher's own
   * default (off).
   */
  readonly residentIdleSeconds: number;
  /** Where the markdown and HTML reports go. */
  readonly outDir: string;
}

export const DEFAULTS: Omit<SimOptions, 'minutes' | 'policies' | 'outDir'> = {
  seed: 1,
  cronMinutes: 10,
  retentionMinutes: 10,
  probeEveryMinutes: 5,
  sampleSeconds: 20,
  load: 1,
  settleMinutes: 5,
  maxPerKind: 8,
  storage: 'local',
  residentIdleSeconds: 0,
};

/** The options that shape a run (recorded with its result): all but policies and outDir. */
export type Workload = Omit<SimOptions, 'policies' | 'outDir'>;

export function workloadOf(options: SimOptions): Workload {
  const workload: { -readonly [K in keyof SimOptions]?: SimOptions[K] } = { ...options };
  delete workload.policies;
  delete workload.outDir;
  return workload as Workload;
}

/** Bad command-line input; the message names the flag. */
export class OptionError extends Error {
  override name = 'OptionError';
}

const NUMERIC: Record<string, keyof SimOptions> = {
  '--minutes': 'minutes',
  '--seed': 'seed',
  '--cron-minutes': 'cronMinutes',
  '--retention-minutes': 'retentionMinutes',
  '--probe-every-minutes': 'probeEveryMinutes',
  '--sample-seconds': 'sampleSeconds',
  '--load': 'load',
  '--settle-minutes': 'settleMinutes',
  '--max-per-kind': 'maxPerKind',
};

function positive(flag: string, text: string | undefined, integer: boolean): number {
  const value = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw new OptionError(`${flag}: expected a number > 0, got ${JSON.stringify(text ?? null)}`);
  }
  if (integer && !Number.isInteger(value)) {
    throw new OptionError(`${flag}: expected a whole number, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** Parses the arguments after `lake-sim`; throws `OptionError` naming the bad flag. */
export function parseOptions(argv: readonly string[], defaultOutDir: string): SimOptions {
  const numbers: Partial<Record<keyof SimOptions, number>> = {};
  let policies: Policy[] | undefined;
  let storage: Storage = DEFAULTS.storage;
  let residentIdleSeconds = DEFAULTS.residentIdleSeconds;
  let outDir = defaultOutDir;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[i + 1];
    i++;
    const numeric = NUMERIC[flag];
    if (numeric !== undefined) {
      numbers[numeric] = positive(flag, value, flag === '--seed' || flag === '--max-per-kind');
    } else if (flag === '--policy') {
      const names = (value ?? '').split(',').filter((p) => p !== '');
      const bad = names.find((p) => !(Policies as readonly string[]).includes(p));
      if (names.length === 0 || bad !== undefined) {
        throw new OptionError(
          `--policy: expected ${Policies.join('|')} (or several, comma-separated), got ${JSON.stringify(value ?? null)}`,
        );
      }
      policies = [...new Set(names as Policy[])];
    } else if (flag === '--resident-idle-seconds') {
      const seconds = Number(value);
      if (value === undefined || value.trim() === '' || !Number.isInteger(seconds) || seconds < 0) {
        throw new OptionError(
          `--resident-idle-seconds: expected a whole number ≥ 0, got ${JSON.stringify(value ?? null)}`,
        );
      }
      residentIdleSeconds = seconds;
    } else if (flag === '--storage') {
      if (!(Storages as readonly string[]).includes(value ?? '')) {
        throw new OptionError(
          `--storage: expected ${Storages.join('|')}, got ${JSON.stringify(value ?? null)}`,
        );
      }
      storage = value as Storage;
    } else if (flag === '--out') {
      if (value === undefined || value === '') throw new OptionError('--out: expected a directory');
      outDir = value;
    } else {
      throw new OptionError(`unknown flag ${JSON.stringify(flag)}`);
    }
  }
  if (numbers.minutes === undefined) throw new OptionError('--minutes: required');
  if (policies === undefined) throw new OptionError('--policy: required (none|cron|icepack)');
  return {
    ...DEFAULTS,
    ...numbers,
    minutes: numbers.minutes,
    policies,
    storage,
    residentIdleSeconds,
    outDir,
  };
}
