// Prints the closing line of a test run from Vitest's JSON report:
// "N passed, N failed, N skipped". Exits non-zero when the report is missing, when a
// test failed, or when no test ran at all (a run that tests nothing must not pass).
import { readFileSync } from 'node:fs';

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
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
