import { resolve } from 'node:path';
import { describeServiceProcess } from '@icepack/test';
import { inject } from 'vitest';

const infra = inject('infra');

describeServiceProcess('planner', {
  entry: resolve(import.meta.dirname, 'main.ts'),
  env: {
    ICEPACK_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
    ICEPACK_REDIS_URL: infra.redisUrl,
    ICEPACK_LOG_LEVEL: 'info',
    ICEPACK_API_TOKEN: 'test-token-0123456789abcdef',
  },
  apiPath: '/v1/catalogs',
});
