export { infraEnv } from './infra/env.ts';
export { runLocalScript } from './infra/local-script.ts';
// Defined in @icepack/runtime/testing so that runtime's own tests have it too (temp-dir.ts).
export { tempDir, withTempDir } from '@icepack/runtime/testing';
export type { LocalScriptResult } from './infra/local-script.ts';
export type { InfraEnv } from './infra/env.ts';
export { JOB_PYTHON_VERSIONS, pythonOfVersion } from './infra/python-version.ts';
export { generateFixtures, fixtureTruth } from './fixtures/generate-fixtures.ts';
export type { GenerateFixturesOptions } from './fixtures/generate-fixtures.ts';
export { tableTruth } from './fixtures/table-truth.ts';
export type { TableTruthOptions } from './fixtures/table-truth.ts';
export { groundTruthSchema, tableTruthSchema } from './fixtures/ground-truth.ts';
export type { GroundTruth, TableTruth } from './fixtures/ground-truth.ts';
export { FixtureKey, FixtureScale } from './fixtures/fixture-keys.ts';
export { FixtureScriptError } from './fixtures/run-python.ts';
export { catalogPropertyArgs } from './fixtures/fixture-scripts.ts';
export { sparkSql } from './fixtures/spark-sql.ts';
export { describeServiceProcess } from './services/service-process-contract.ts';
export type { ServiceProcessContractOptions } from './services/service-process-contract.ts';
export type { KubeEnv } from './infra/env.ts';
export {
  adminKubeConfig,
  ControlPlaneMissingError,
  kubeConfigWithToken,
  serviceAccountKubeConfig,
  whoAmI,
} from './k8s-real/control-plane.ts';
export type {
  RoleRef,
  ServiceAccountAccess,
  ServiceAccountTokenOptions,
} from './k8s-real/control-plane.ts';
export { chartServiceAccess, writeKubeConfig } from './k8s-real/chart-access.ts';
export type { ChartAccess, ChartAccessOptions, ChartService } from './k8s-real/chart-access.ts';
export { startKubeletStandin } from './k8s-real/kubelet-standin.ts';
export { startSecondApiServer } from './k8s-real/second-api-server.ts';
export type { SecondApiServer } from './k8s-real/second-api-server.ts';
export type {
  DriverRun,
  KubeletStandin,
  KubeletStandinOptions,
} from './k8s-real/kubelet-standin.ts';
export type { DriverCommand } from './k8s-real/driver-command.ts';
export {
  ownReadProperties,
  PrivateStack,
  s3Objects,
  StackScriptError,
  startService,
} from './e2e/private-stack.ts';
export type {
  BootstrapCatalog,
  BootstrapGroup,
  PrivateS3,
  S3Object,
  Service,
} from './e2e/private-stack.ts';
export { TaskEventLog, until } from './e2e/task-event-log.ts';
export { startOAuth2CatalogProxy } from './catalog/oauth2-catalog-proxy.ts';
export { notAuthorized, startCatalogProxy } from './catalog/catalog-proxy.ts';
export { startNamespaceScopedCatalog } from './catalog/namespace-scoped-catalog.ts';
export { startAnswerPropertiesCatalog } from './catalog/answer-properties-catalog.ts';
export type { AnswerProperties } from './catalog/answer-properties-catalog.ts';
export type { NamespaceScopedCatalog } from './catalog/namespace-scoped-catalog.ts';
export type { CatalogProxy, Forward } from './catalog/catalog-proxy.ts';
export type {
  OAuth2CatalogProxy,
  OAuth2CatalogProxyOptions,
} from './catalog/oauth2-catalog-proxy.ts';
