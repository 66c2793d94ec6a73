import { resolve } from 'node:path';
import { describeServiceProcess } from '@icepack/test';
import { inject } from 'vitest';

const infra = inject('infra');

describeServiceProcess('dispatcher', {
  entry: resolve(import.meta.dirname, 'main.ts'),
  env: {
    ICEPACK_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
    ICEPACK_REDIS_URL: infra.redisUrl,
    ICEPACK_LOG_LEVEL: 'info',
  },
});
