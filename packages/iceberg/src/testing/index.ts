// `@icepack/iceberg/testing`: writers of real Iceberg Avro files and table layouts, for
// tests and benchmarks. Kept out of the package's main entry, so service images need not
// ship them.
export { encodeAvroContainer, type AvroContainerOptions } from './avro-writer.ts';
export {
  encodeManifest,
  encodeManifestList,
  manifestEntrySchema,
  manifestListSchema,
  type TestEntry,
  type TestManifest,
  type TestManifestListEntry,
  type TestPartitionField,
} from './manifest-writer.ts';
export { TestTableWriter, type TestTableOptions, type TestCommit } from './test-table-writer.ts';
