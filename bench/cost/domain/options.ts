/**
 * The cost benchmark's command line (docs/cost-bench.md): which tables, which modes. Pure.
 */

export type BatchMode = 'batched' | 'single';
export type Sizing = 'learned' | 'fixed';

export interface CostOptions {
  /** Small tables (batched mode; the single mode takes `singleSmall` of them). */
  readonly small: number;
  readonly large: number;
  readonly modes: readonly BatchMode[];
  readonly sizings: readonly Sizing[];
  /**
   * Small tables in the single mode: one Spark application per task costs 20–50 s here, so
   * the single mode maintains a sample and its figures are compared per task.
   */
  readonly singleSmall: number;
  /** Size of each large table and its file count (over 500 files: the large lane). */
  readonly largeMb: number;
  readonly largeFiles: number;
  /** Longest wait for the queue to drain after the services start. */
  readonly settleMinutes: number;
  readonly outDir: string;
  /** Label of the result file: `cost-[<label>-]<date>.md`. */
  readonly label?: string;
}

export class OptionError extends Error {}

export const DEFAULTS: Omit<CostOptions, 'outDir'> = {
  small: 200,
  large: 5,
  modes: ['batched', 'single'],
  sizings: ['learned', 'fixed'],
  singleSmall: 20,
  largeMb: 300,
  largeFiles: 600,
  settleMinutes: 90,
};

function count(flag: string, value: string | undefined, min: number): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < min) {
    throw new OptionError(`${flag}: expected an integer ≥ ${String(min)}, got ${String(value)}`);
  }
  return n;
}

function list<T extends string>(
  flag: string,
  value: string | undefined,
  allowed: readonly T[],
): T[] {
  const items = (value ?? '').split(',').filter((s) => s !== '');
  const bad = items.filter((s) => !allowed.includes(s as T));
  if (items.length === 0 || bad.length > 0) {
    throw new OptionError(
      `${flag}: expected a comma-separated list of ${allowed.join(', ')}, got ${String(value)}`,
    );
  }
  return [...new Set(items)] as T[];
}

export function parseOptions(argv: readonly string[], outDir: string): CostOptions {
  const o: { -readonly [K in keyof CostOptions]: CostOptions[K] } = { ...DEFAULTS, outDir };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[i + 1];
    i++;
    switch (flag) {
      case '--small':
        o.small = count(flag, value, 1);
        break;
      case '--large':
        o.large = count(flag, value, 0);
        break;
      case '--mode':
        o.modes = list(flag, value, ['batched', 'single'] as const);
        break;
      case '--sizing':
        o.sizings = list(flag, value, ['learned', 'fixed'] as const);
        break;
      case '--single-small':
        o.singleSmall = count(flag, value, 1);
        break;
      case '--large-mb':
        o.largeMb = count(flag, value, 1);
        break;
      case '--large-files':
        o.largeFiles = count(flag, value, 1);
        break;
      case '--settle-minutes':
        o.settleMinutes = count(flag, value, 1);
        break;
      case '--out':
        if (value === undefined) throw new OptionError('--out: expected a directory');
        o.outDir = value;
        break;
      case '--label':
        if (value === undefined || !/^[a-z0-9-]+$/.test(value)) {
          throw new OptionError(`--label: expected [a-z0-9-]+, got ${String(value)}`);
        }
        o.label = value;
        break;
      default:
        throw new OptionError(`unknown option ${flag}`);
    }
  }
  return o;
}

/** Small tables a run of `mode` creates: all of them batched, a sample unbatched. */
export function smallTablesOf(options: CostOptions, mode: BatchMode): number {
  return mode === 'single' ? Math.min(options.small, options.singleSmall) : options.small;
}
