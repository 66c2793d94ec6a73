// The cost benchmark (issue 18 point 4, docs/cost-bench.md):
//   ./dev bench cost --small 200 --large 5 --mode batched,single --sizing learned,fixed
// Maintains a fixed set of small and large tables once per mode and records the core-seconds
// requested and used for small-table and large-table tasks, runs killed for memory and each
// task's outcome, and checks every table's rows and checksum before and after. Writes
// bench/results/cost-[<label>-]<date>.md and the raw figures under $ICEPACK_RUN/cost/.
// `./dev bench cost report [flags] RAW.json[.gz]…` writes the report again from raw figures.
// Exits 3 when a mode's data differ, a Spark job ran twice, or the queue did not drain.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { infraEnv } from '@icepack/test';
import { runCost } from './cost.ts';
import { OptionError, parseOptions } from './domain/options.ts';
import { markdownReport } from './domain/report.ts';
import { problems } from './domain/summary.ts';
import type { CostRun } from './domain/summary.ts';
import type { CostOptions } from './domain/options.ts';

const log = (text: string): void => {
  process.stderr.write(`[cost ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
};
const USAGE =
  'usage: ./dev bench cost [--small N] [--large N] [--mode batched,single] [--sizing learned,fixed] [--single-small N] [--large-mb MB] [--large-files N] [--settle-minutes M] [--label L] [--out DIR]\n       ./dev bench cost report [the same flags] RAW.json[.gz]…';

async function writeReport(runs: readonly CostRun[], options: CostOptions, command: string) {
  const date = runs[0]!.startedAt.slice(0, 10);
  const stem = `cost-${options.label === undefined ? '' : `${options.label}-`}${date}`;
  await mkdir(options.outDir, { recursive: true });
  const markdown = markdownReport(
    runs,
    options,
    command,
    `Cost of maintenance: batched and single runs, learned and fixed sizing — ${date}`,
  );
  await writeFile(join(options.outDir, `${stem}.md`), markdown);
  log(`report: ${join(options.outDir, `${stem}.md`)}`);
  process.stdout.write(markdown);
}

async function measure(options: CostOptions, argv: readonly string[]): Promise<CostRun[]> {
  const rawDir = join(infraEnv().runDir, 'cost');
  await mkdir(rawDir, { recursive: true });
  const runs: CostRun[] = [];
  for (const sizing of options.sizings) {
    for (const mode of options.modes) {
      const run = await runCost(options, mode, sizing, log);
      runs.push(run);
      const raw = join(
        rawDir,
        `cost-${run.startedAt.replace(/[:.]/g, '-')}-${mode}-${sizing}.json`,
      );
      await writeFile(raw, JSON.stringify(run, null, 1));
      log(
        `${mode}, ${sizing}: raw figures in ${raw}; problems: ${problems(run).join('; ') || 'none'}`,
      );
    }
  }
  await writeReport(runs, options, `./dev bench cost ${argv.join(' ')}`);
  return runs;
}

/**
 * `report [flags] RAW.json[.gz]…`: the report again from raw figures (modes run apart, or a run
 * cut short; gzipped as kept in `bench/results/raw/`); the flags describe the tables as in the
 * run's command.
 */
async function report(argv: readonly string[]): Promise<CostRun[]> {
  const files = argv.filter((a, i) => /\.json(\.gz)?$/.test(a) && !argv[i - 1]?.startsWith('--'));
  if (files.length === 0) throw new OptionError('report: name at least one raw JSON file');
  const options = parseOptions(
    argv.filter((a) => !files.includes(a)),
    join(import.meta.dirname, '..', 'results'),
  );
  const runs = await Promise.all(
    files.map(async (f) => {
      const bytes = await readFile(f);
      return JSON.parse(
        (f.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8'),
      ) as CostRun;
    }),
  );
  await writeReport(runs, options, `./dev bench cost report ${argv.join(' ')}`);
  return runs;
}

const argv = process.argv.slice(2);
let runs: CostRun[];
try {
  runs =
    argv[0] === 'report'
      ? await report(argv.slice(1))
      : await measure(parseOptions(argv, join(import.meta.dirname, '..', 'results')), argv);
} catch (error) {
  if (!(error instanceof OptionError)) throw error;
  log(`${error.message}\n${USAGE}`);
  process.exit(2);
}
process.exit(runs.every((r) => problems(r).length === 0) ? 0 : 3);
