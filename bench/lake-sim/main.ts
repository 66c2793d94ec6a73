// The lake simulator: ./dev bench lake-sim --minutes 30 --policy icepack|cron|none [--seed N]
// (several policies: --policy none,cron,icepack). Writes bench/results/lake-sim-<date>[-<policy>].md
// and .html, and the raw figures as gzipped JSON under <out>/raw/ (committed with the reports).
// `./dev bench lake-sim report [--out DIR] RAW.json[.gz]…` rebuilds the reports from raw
// figures — also of policies run on different days (same seed and options). See docs/lake-sim.md.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { runLakeSim } from './lake-sim.ts';
import { OptionError, parseOptions } from './domain/options.ts';
import { htmlReport, markdownReport } from './domain/report.ts';
import { invariants } from './domain/result.ts';
import type { RunResult } from './domain/result.ts';

const log = (text: string): void => {
  process.stderr.write(`[lake-sim ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
};
const USAGE =
  'usage: ./dev bench lake-sim --minutes N --policy none|cron|icepack[,…] [--seed N] [--cron-minutes K] [--retention-minutes R] [--probe-every-minutes P] [--sample-seconds S] [--load L] [--settle-minutes M] [--max-per-kind N] [--storage local|s3] [--out DIR]\n       ./dev bench lake-sim report [--out DIR] RAW.json…';
const defaultOut = join(import.meta.dirname, '..', 'results');

async function writeReports(results: RunResult[], outDir: string, command: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  const date = results[0]!.startedAt.slice(0, 10);
  const stem = join(
    outDir,
    results.length === 1 ? `lake-sim-${date}-${results[0]!.policy}` : `lake-sim-${date}`,
  );
  const markdown = markdownReport(results, command);
  // Chart.js's UMD build, next to the CommonJS entry its package exports.
  const chartJs = await readFile(
    join(dirname(createRequire(import.meta.url).resolve('chart.js')), 'chart.umd.min.js'),
    'utf8',
  );
  await writeFile(`${stem}.md`, markdown);
  await writeFile(`${stem}.html`, htmlReport(results, markdown, chartJs));
  log(`report: ${stem}.md and ${stem}.html`);
  process.stdout.write(markdown);
}

async function simulate(argv: string[]): Promise<RunResult[]> {
  const options = parseOptions(argv, defaultOut);
  const results: RunResult[] = [];
  // Beside the reports, so they are kept with them: a policy run on another day (or machine)
  // can be joined into one report with `report` (a 30-min run is ~0.5 MB, ~50 KB gzipped).
  const rawDir = join(options.outDir, 'raw');
  await mkdir(rawDir, { recursive: true });
  for (const policy of options.policies) {
    const result = await runLakeSim(options, policy, log);
    results.push(result);
    const raw = join(
      rawDir,
      `lake-sim-${result.startedAt.replace(/[:.]/g, '-')}-${policy}.json.gz`,
    );
    await writeFile(raw, gzipSync(JSON.stringify(result)));
    log(`${policy}: raw figures in ${raw}`);
  }
  await writeReports(results, options.outDir, `./dev bench lake-sim ${argv.join(' ')}`);
  return results;
}

async function report(argv: string[]): Promise<RunResult[]> {
  let outDir = defaultOut;
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out') outDir = argv[++i] ?? outDir;
    else files.push(argv[i]!);
  }
  if (files.length === 0) throw new OptionError('report: name at least one raw JSON file');
  const results = await Promise.all(
    files.map(async (f) => {
      const bytes = await readFile(f);
      return JSON.parse(
        (f.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8'),
      ) as RunResult;
    }),
  );
  const options = results[0]!.options;
  const command = `./dev bench lake-sim --minutes ${String(options.minutes)} --policy ${results.map((r) => r.policy).join(',')} --seed ${String(options.seed)}${options.storage === 's3' ? ' --storage s3' : ''}`;
  await writeReports(results, outDir, command);
  return results;
}

const argv = process.argv.slice(2);
let results: RunResult[];
try {
  results = argv[0] === 'report' ? await report(argv.slice(1)) : await simulate(argv);
} catch (error) {
  if (!(error instanceof OptionError)) throw error;
  log(`${error.message}\n${USAGE}`);
  process.exit(2);
}
const broken = results.filter((r) => {
  const i = invariants(r);
  return i.wasted.length + i.duplicates.length + i.data.length > 0 || !i.verified;
});
process.exit(broken.length === 0 ? 0 : 3);
