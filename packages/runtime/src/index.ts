// Config
export {
  baseConfigSchema,
  KafkaSaslMechanism,
  LogLevel,
  OtlpExporterChoice,
} from './config/base-config.ts';
export type { BaseConfig } from './config/base-config.ts';
export { ConfigError } from './config/config-error.ts';
export { duration, DurationParseError, parseDuration } from './config/duration.ts';
export { commaList, flag, hostPortList, port, url } from './config/fields.ts';
export { loadConfig } from './config/load-config.ts';
export { redactConfig } from './config/redact-config.ts';
export { isSecret, secret } from './config/secret.ts';

// Catalog access: where secret references resolve from, which addresses may be called
export {
  addressProblem,
  catalogAccessProblems,
  DEFAULT_SECRET_ENV_PREFIX,
  DEFAULT_SECRETS_DIR,
  defaultCatalogAccessPolicy,
  hostProblem,
  propertyValueProblem,
  secretRefProblem,
} from './secrets/catalog-access-policy.ts';
export type { CatalogAccessPolicy, CatalogAccessProblem } from './secrets/catalog-access-policy.ts';
export {
  catalogAccessConfig,
  catalogAccessPolicy,
  isLocalCatalog,
  localCatalogsConfig,
} from './secrets/catalog-access-config.ts';
export { resolvedAddressProblem } from './secrets/resolved-address.ts';
export { SecretResolutionError, secretResolver } from './secrets/secret-resolver.ts';
export type { SecretResolver } from './secrets/secret-resolver.ts';

// Group Spark settings: which sparkConf keys and image registries a resource group may use
export {
  confKeyAllowed,
  DEFAULT_SPARK_CONF_KEYS,
  DEFAULT_SPARK_IMAGE_REGISTRIES,
  defaultSparkSettingsPolicy,
  imageAllowed,
  sparkSettingsConfig,
  sparkSettingsPolicy,
  sparkSettingsProblems,
} from './spark/spark-settings-policy.ts';
export type { SparkSettingsPolicy, SparkSettingsProblem } from './spark/spark-settings-policy.ts';

// Logging
export { createLogger, REDACTED_PATHS, withContext } from './logger/create-logger.ts';
export type { LogContext, Logger, LoggerOptions } from './logger/create-logger.ts';

// HTTP
export { requireBearerToken } from './http/bearer-token.ts';
export { createHttpServer } from './http/create-http-server.ts';
export type { HttpServer, HttpServerOptions, MetricsEndpoint } from './http/create-http-server.ts';
export { errorHandler, notFoundHandler } from './http/error-handler.ts';
export { HttpError } from './http/http-errors.ts';
export { runReadinessChecks } from './http/readiness.ts';
export type { CheckResult, ReadinessCheck, ReadinessReport } from './http/readiness.ts';

// Lifecycle
export { Lifecycle } from './lifecycle/lifecycle.ts';
export type { LifecycleOptions, ShutdownOutcome } from './lifecycle/lifecycle.ts';
export { runService } from './lifecycle/run-service.ts';
export type { RunServiceOptions } from './lifecycle/run-service.ts';
export { openServiceCore } from './lifecycle/service-core.ts';
export type { ServiceCore, ServiceCoreOptions } from './lifecycle/service-core.ts';

// Retry
export { backoffDelay, sleep } from './retry/backoff.ts';
export type { BackoffOptions } from './retry/backoff.ts';

// Kafka
export { KafkaClient } from './kafka/kafka-client.ts';
export type { KafkaClientOptions } from './kafka/kafka-client.ts';
export { applyAcls, removeAcls } from './kafka/apply-acls.ts';
export {
  aclCommands,
  DEFAULT_GROUP_PREFIXES,
  KafkaPrincipalRole,
  localKafkaUsers,
  ROLE_GRANTS,
  serviceAcls,
} from './kafka/service-acls.ts';
export type { AclOperation, AclRule, ServiceAclOptions } from './kafka/service-acls.ts';
export { kafkaTransport, tlsOptions } from './kafka/kafka-transport.ts';
export type { KafkaTransport, ReadConfigFile, TlsFiles } from './kafka/kafka-transport.ts';
export { EnvelopeProducer } from './kafka/envelope-producer.ts';
export type { EnvelopeProducerOptions } from './kafka/envelope-producer.ts';
export { DlqReason, EnvelopeConsumer, MessageOutcome } from './kafka/envelope-consumer.ts';
export type {
  EnvelopeConsumerOptions,
  MessageContext,
  MessageHandler,
  MessageHandlers,
} from './kafka/envelope-consumer.ts';
export { isUnrecoverable, UnrecoverableMessageError } from './kafka/handler-errors.ts';
export { deleteTopics, ensureTopics } from './kafka/ensure-topics.ts';
export type { TopicDefinition } from './kafka/ensure-topics.ts';

// Telemetry
export { Attr } from './telemetry/attributes.ts';
export { activeTraceId, extractContext, injectTraceparent } from './telemetry/trace-context.ts';
export type { TraceCarrier } from './telemetry/trace-context.ts';
export { inSpan } from './telemetry/in-span.ts';
export {
  counter,
  createInstruments,
  gauge,
  histogram,
  upDownCounter,
} from './telemetry/instruments.ts';
export type {
  CounterSpec,
  GaugeSpec,
  HistogramSpec,
  InstrumentAttributes,
  InstrumentOf,
  Instruments,
  InstrumentSpec,
  TypedCounter,
  TypedGauge,
  TypedHistogram,
  UpDownCounterSpec,
} from './telemetry/instruments.ts';
export type { InSpanOptions } from './telemetry/in-span.ts';
export { startTelemetry } from './telemetry/start-telemetry.ts';
export { telemetryOptions } from './telemetry/telemetry-config.ts';
export type {
  PrometheusOptions,
  Telemetry,
  TelemetryOptions,
} from './telemetry/start-telemetry.ts';

// Redis
export { createRedisConnection, RedisRole } from './redis/create-redis-connection.ts';
export type { RedisConnection, RedisConnectionOptions } from './redis/create-redis-connection.ts';
export { evictionPolicyWarning } from './redis/eviction-policy.ts';
export { redisTransport } from './redis/redis-transport.ts';
export { RedisScript } from './redis/redis-script.ts';
export { retryUntil, ShutdownInProgressError } from './retry/retry-until.ts';
export type { RetryUntilOptions } from './retry/retry-until.ts';
