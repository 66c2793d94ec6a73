import { resolve } from 'node:path';
import { describeServiceProcess } from '@icepack/test';
import { inject } from 'vitest';

const infra = inject('infra');

describeServiceProcess('provisioner', {
  entry: resolve(import.meta.dirname, 'main.ts'),
  env: {
    ICEPACK_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
    ICEPACK_REDIS_URL: infra.redisUrl,
    ICEPACK_LOG_LEVEL: 'info',
    ICEPACK_API_TOKEN: 'test-token-0123456789abcdef',
    // No Kubernetes here: local mode keeps /readyz about Kafka and Redis only.
    ICEPACK_PROVISIONER_MODE: 'local',
    ICEPACK_PROVISIONER_KEY_PREFIX: `icepack-test:main-${process.pid}`,
  },
  apiPath: '/v1/catalogs',
});
