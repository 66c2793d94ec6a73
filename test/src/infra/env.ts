import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the local infrastructure listens. The defaults match deploy/local/lib.sh; the
 * same environment variables override both, so tests and scripts always agree.
 */
export interface InfraEnv {
  /** `redis://127.0.0.1:16379` */
  readonly redisUrl: string;
  /** `127.0.0.1:19092` */
  readonly kafkaBrokers: readonly string[];
  /** `127.0.0.1:19094`: the same broker's SASL/SCRAM listener, where ACLs are enforced. */
  readonly kafkaSaslBrokers: readonly string[];
  /** The SCRAM users' password files: `<dir>/icepack-<role>` (`deploy/local/kafka.sh users`). */
  readonly kafkaSaslDir: string;
  /** `http://127.0.0.1:18181` — Apache Iceberg's REST catalog server. */
  readonly catalogUri: string;
  /** The Python interpreter of the cached venv that has PySpark. */
  readonly python: string;
  /**
   * `spark.jars` as `deploy/local/spark.sh env` prints it: the Iceberg Spark runtime jar and
   * Iceberg's AWS bundle (S3FileIO), comma-separated.
   */
  readonly sparkJars: string;
  /** `http://127.0.0.1:19000` — the S3 store (moto, `deploy/local/s3.sh`), bucket `s3Bucket`. */
  readonly s3Endpoint: string;
  readonly s3Bucket: string;
  /** `http://127.0.0.1:18182` — the REST catalog whose warehouse is on S3 (`s3-catalog.sh`). */
  readonly s3CatalogUri: string;
  /** The REST catalog that enforces OAuth2 client credentials (`oauth-catalog.sh`). */
  readonly oauthCatalog: OAuthCatalogEnv;
  /** Cache directory for downloads (outside the repo). */
  readonly cacheDir: string;
  /** State directory of the local stack: data, pids, logs. */
  readonly runDir: string;
  /** The local Kubernetes control plane (`deploy/local/k8s.sh`). */
  readonly kube: KubeEnv;
}

/** Nessie's Iceberg REST API behind Keycloak's tokens, as `deploy/local/oauth-catalog.sh` starts them. */
export interface OAuthCatalogEnv {
  /** `http://127.0.0.1:18183/iceberg` — Nessie's Iceberg REST API (refuses requests without a token). */
  readonly uri: string;
  /** Nessie's warehouse name (`GET /v1/config?warehouse=`). */
  readonly warehouse: string;
  /** `http://127.0.0.1:18185/realms/icepack/protocol/openid-connect/token` — Keycloak's token endpoint. */
  readonly tokenUri: string;
  /** The confidential client allowed the client-credentials grant. */
  readonly clientId: string;
  /** File with its secret, made when the state directory is new (`$ICEPACK_RUN/oauth-catalog/client-secret`). */
  readonly clientSecretFile: string;
  /** A second client, same secret, whose tokens live `shortTokenSeconds`: shorter than any Spark job. */
  readonly shortTokenClientId: string;
  readonly shortTokenSeconds: number;
  /** Keycloak's log: one `type="CLIENT_LOGIN"` line per token issued (`oauth-catalog.sh`). */
  readonly issuerLog: string;
}

/** Where the local Kubernetes control plane listens, as `deploy/local/k8s.sh` starts it. */
export interface KubeEnv {
  /** `https://127.0.0.1:16443` — the real kube-apiserver (RBAC, token auth, loopback only). */
  readonly apiUrl: string;
  /** The admin kubeconfig (`system:masters`): `$ICEPACK_RUN/k8s/admin.kubeconfig`. */
  readonly kubeconfig: string;
  /** The kwok fake node pods are scheduled on; the kubelet stand-in runs its Spark drivers. */
  readonly node: string;
}

export function infraEnv(env: NodeJS.ProcessEnv = process.env): InfraEnv {
  const cacheDir = env.ICEPACK_CACHE ?? join(homedir(), '.cache', 'icepack');
  const runDir = env.ICEPACK_RUN ?? join(homedir(), '.local', 'state', 'icepack');
  const sparkLine = env.ICEPACK_SPARK_LINE ?? '4.0';
  const icebergVersion = env.ICEPACK_ICEBERG_VERSION ?? '1.10.1';
  return {
    redisUrl: `redis://127.0.0.1:${env.ICEPACK_REDIS_PORT ?? '16379'}`,
    kafkaBrokers: [`127.0.0.1:${env.ICEPACK_KAFKA_PORT ?? '19092'}`],
    kafkaSaslBrokers: [`127.0.0.1:${env.ICEPACK_KAFKA_SASL_PORT ?? '19094'}`],
    kafkaSaslDir: join(runDir, 'kafka', 'sasl'),
    catalogUri: `http://127.0.0.1:${env.ICEPACK_CATALOG_PORT ?? '18181'}`,
    python: join(cacheDir, 'venv', 'bin', 'python'),
    sparkJars:
      env.ICEPACK_SPARK_JARS ??
      [
        join(cacheDir, 'jars', `iceberg-spark-runtime-${sparkLine}_2.13-${icebergVersion}.jar`),
        join(cacheDir, 'jars', `iceberg-aws-bundle-${icebergVersion}.jar`),
      ].join(','),
    s3Endpoint: `http://127.0.0.1:${env.ICEPACK_S3_PORT ?? '19000'}`,
    s3Bucket: env.ICEPACK_S3_BUCKET ?? 'icepack',
    s3CatalogUri: `http://127.0.0.1:${env.ICEPACK_S3_CATALOG_PORT ?? '18182'}`,
    oauthCatalog: {
      uri: `http://127.0.0.1:${env.ICEPACK_OAUTH_CATALOG_PORT ?? '18183'}/iceberg`,
      warehouse: 'warehouse',
      tokenUri: `http://127.0.0.1:${env.ICEPACK_OAUTH_ISSUER_PORT ?? '18185'}/realms/icepack/protocol/openid-connect/token`,
      clientId: 'icepack-scanner',
      clientSecretFile: join(runDir, 'oauth-catalog', 'client-secret'),
      shortTokenClientId: 'icepack-short-token',
      shortTokenSeconds: 3,
      issuerLog: join(env.ICEPACK_LOGS ?? join(runDir, 'logs'), 'oauth-catalog-keycloak.log'),
    },
    cacheDir,
    runDir,
    kube: {
      apiUrl: `https://127.0.0.1:${env.ICEPACK_K8S_API_PORT ?? '16443'}`,
      kubeconfig: join(runDir, 'k8s', 'admin.kubeconfig'),
      node: env.ICEPACK_K8S_NODE ?? 'icepack-kwok-0',
    },
  };
}
