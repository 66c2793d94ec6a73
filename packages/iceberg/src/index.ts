// The public surface of @icepack/iceberg, named one by one.

export {
  IcebergError,
  IcebergErrorKind,
  isIcebergError,
  type IcebergErrorContext,
  type IcebergErrorOptions,
} from './errors/iceberg-error.ts';

export {
  RestCatalog,
  type CatalogConfig,
  type LoadTableOptions,
  type LoadTableOutcome,
} from './catalog/rest-catalog.ts';
export {
  resolveRestCatalogOptions,
  type RestCatalogOptions,
  type ResolvedRestCatalogOptions,
} from './catalog/rest-catalog-options.ts';
export { DEFAULT_OAUTH2_SCOPE, type RestCatalogAuth } from './catalog/catalog-auth.ts';
export {
  restCatalogOptions,
  type ResolveSecret,
  type CatalogClientSettings,
} from './catalog/catalog-definition.ts';
export { DEFAULT_MAX_RESPONSE_BYTES } from './catalog/bounded-body.ts';
export { OAuth2TokenSource, type OAuth2TokenOptions } from './catalog/oauth2-token.ts';
export {
  resolveRetry,
  retryDelayMs,
  parseRetryAfter,
  type RetryOptions,
  type ResolvedRetry,
} from './catalog/retry-policy.ts';
export {
  NAMESPACE_SEPARATOR,
  encodeNamespace,
  namespaceParam,
  separatorFromConfig,
} from './catalog/namespace-path.ts';

export {
  SnapshotOperation,
  type Snapshot,
  type SnapshotRef,
  type PartitionField,
  type PartitionSpec,
  type SortField,
  type SortOrder,
  type TableSchema,
  type TableMetadataModel,
} from './metadata/table-model.ts';
export { parseTableModel, toTableModel, tableModelFromWire } from './metadata/to-table-model.ts';
export {
  snapshotAncestry,
  snapshotsSinceLast,
  currentSnapshot,
  type SnapshotsSince,
} from './metadata/snapshot-history.ts';
export { loadTableFromMetadataFile, type LoadedTable } from './metadata/loaded-table.ts';

export { schemeOf, type FileIO } from './io/file-io.ts';
export { LocalFileIO, localPath } from './io/local-file-io.ts';
export {
  S3FileIO,
  S3Properties,
  parseS3Location,
  s3OptionsFromProperties,
  type S3FileIOOptions,
  type S3Credentials,
} from './io/s3-file-io.ts';
export { TableFileIO, type TableFileIOOptions } from './io/table-file-io.ts';
export {
  S3ClientPool,
  DEFAULT_MAX_S3_CLIENTS,
  type S3ClientPoolOptions,
  type RefreshS3Credentials,
} from './io/s3-client-pool.ts';
export {
  DEFAULT_CREDENTIAL_REFRESH_MARGIN_MS,
  refreshAtMs,
  refreshDue,
  type CredentialLifetime,
} from './credentials/refresh-decision.ts';
export { credentialFor, type StorageCredential } from './io/storage-credentials.ts';

export {
  ManifestContent,
  EntryStatus,
  FileContent,
  isLive,
  isDeletionVector,
  type ManifestFile,
  type ManifestEntry,
} from './manifest/manifest-file.ts';
export { decodeManifestList } from './manifest/manifest-list-reader.ts';
export { decodeManifest, type DecodeManifestResult } from './manifest/manifest-reader.ts';
export {
  scanManifest,
  clearEntryPlans,
  EntryView,
  type ScanManifestResult,
} from './manifest/entry-scanner.ts';
export {
  MAX_AVRO_DECOMPRESSED_BYTES,
  readAvroContainer,
  type AvroContainer,
  type AvroBlock,
} from './manifest/avro-container.ts';
export {
  exactLongType,
  exactLongHook,
  decodeZigZag,
  encodeZigZag,
  type ExactLong,
} from './manifest/exact-long.ts';
export { ByteBoundedLru } from './manifest/byte-bounded-lru.ts';
export {
  ManifestCache,
  DEFAULT_MANIFEST_CACHE_BYTES,
  type ManifestCacheOptions,
  type ManifestReadStats,
} from './manifest/manifest-cache.ts';
export {
  readSnapshotManifests,
  readManifestEntries,
  deriveFromManifest,
  type ManifestDerivation,
} from './manifest/read-manifests.ts';

export { computeTableState, type ComputeTableStateOptions } from './health/compute-table-state.ts';
export { SIZE_HISTOGRAM_BOUNDS } from './health/size-histogram.ts';
export { renderPartitionValue } from './health/partition-text.ts';
export { clearCompiledReaders } from './manifest/schema-projection.ts';
