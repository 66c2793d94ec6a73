// Prints the closing line of a test run from Vitest's JSON report:
// "N passed, N failed, N skipped". Exits non-zero when the report is missing, when a
// test failed, or when no test ran at all (a run that tests nothing must not pass).
// With a second argument, the integration files' lane times (test/src/infra/lane-setup.ts):
// before that line, the heavy files' total run time and the slowest of them (where time goes).
import { existsSync, readFileSync } from 'node:fs';

const path = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(path, 'utf8'));
} catch (error) {
  console.error(`no test report at ${path}: ${error.message}`);
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
// A file that fails to load has no failed test of its own: count the run's failure then.
const failedTests = report.numFailedTests ?? 0;
const failed = failedTests > 0 || report.success !== false ? failedTests : 1;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
const lanes = process.argv[3];
if (lanes !== undefined && existsSync(lanes)) {
  const rows = readFileSync(lanes, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t'))
    .map(([lane, waited, ran, file]) => ({ lane, waited: Number(waited), ran: Number(ran), file }));
  const heavy = rows.filter((row) => row.lane !== 'shared').sort((a, b) => b.ran - a.ran);
  const total = heavy.reduce((sum, row) => sum + row.ran, 0);
  console.log(
    `heavy integration files (paired or exclusive lane): ${heavy.length}, ${total.toFixed(0)} s of run time; the slowest:`,
  );
  for (const row of heavy.slice(0, 12))
    console.log(`  ${row.ran.toFixed(0).padStart(5)} s  ${row.file}`);
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
