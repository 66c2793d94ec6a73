// What benchmarks and other packages' tests may use of the scanner: its process harness, a
// topic reader and REST-catalog table helpers. Import `@icepack/metadata-scanner/testing`.
export { createNamespace, createTable, dropNamespaceTree, setProperty } from './rest-tables.ts';
export {
  cleanupTest,
  scannerEntry,
  scannerEnv,
  startScanner,
  testNames,
} from './scanner-harness.ts';
export { TopicReader } from './topic-reader.ts';
