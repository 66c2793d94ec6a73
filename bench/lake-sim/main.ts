// The lake simulator: ./dev bench lake-sim --minutes 30 --policy icepack|cron|none [--seed N]
// (several policies: --policy none,cron,icepack). Writes bench/results/lake-sim-<date>[-<policy>].md
// and .html, and the raw figures as JSON under $ICEPACK_RUN/lake-sim/. See docs/lake-sim.md.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { infraEnv } from '@icepack/test';
import { runLakeSim } from './lake-sim.ts';
import { OptionError, parseOptions } from './domain/options.ts';
import { htmlReport, markdownReport } from './domain/report.ts';
import { invariants } from './domain/result.ts';
import type { RunResult } from './domain/result.ts';

const log = (text: string): void => {
  process.stderr.write(`[lake-sim ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
};

let options;
try {
  options = parseOptions(process.argv.slice(2), join(import.meta.dirname, '..', 'results'));
} catch (error) {
  if (!(error instanceof OptionError)) throw error;
  log(
    `${error.message}\nusage: ./dev bench lake-sim --minutes N --policy none|cron|icepack[,…] [--seed N] [--cron-minutes K] [--retention-minutes R] [--probe-every-minutes P] [--sample-seconds S] [--load L] [--settle-minutes M] [--out DIR]`,
  );
  process.exit(2);
}

const results: RunResult[] = [];
const rawDir = join(infraEnv().runDir, 'lake-sim');
await mkdir(rawDir, { recursive: true });
await mkdir(options.outDir, { recursive: true });
for (const policy of options.policies) {
  const result = await runLakeSim(options, policy, log);
  results.push(result);
  const raw = join(rawDir, `lake-sim-${result.startedAt.replace(/[:.]/g, '-')}-${policy}.json`);
  await writeFile(raw, JSON.stringify(result, null, 1));
  log(`${policy}: raw figures in ${raw}`);
}

const date = results[0]!.startedAt.slice(0, 10);
const stem = join(
  options.outDir,
  results.length === 1 ? `lake-sim-${date}-${results[0]!.policy}` : `lake-sim-${date}`,
);
const command = `./dev bench lake-sim ${process.argv.slice(2).join(' ')}`;
const markdown = markdownReport(results, command);
const chartJs = await readFile(
  createRequire(import.meta.url).resolve('chart.js/dist/chart.umd.min.js'),
  'utf8',
);
await writeFile(`${stem}.md`, markdown);
await writeFile(`${stem}.html`, htmlReport(results, markdown, chartJs));
log(`report: ${stem}.md and ${stem}.html`);
process.stdout.write(markdown);

const broken = results.filter((r) => {
  const i = invariants(r);
  return i.wasted.length + i.duplicates.length + i.data.length > 0 || !i.verified;
});
process.exit(broken.length === 0 ? 0 : 3);
