// Composition root of the planner: config → telemetry → logger → clients → HTTP → drain.
import {
  createHttpServer,
  createLogger,
  loadConfig,
  redactConfig,
  runService,
} from '@icepack/runtime';
import { configSchema } from './config.ts';

runService(
  async (lifecycle) => {
    const config = loadConfig(configSchema);
    const logger = createLogger({
      service: config.ICEPACK_SERVICE_NAME,
      level: config.ICEPACK_LOG_LEVEL,
    });
    lifecycle.configure({ logger, timeoutMs: config.ICEPACK_SHUTDOWN_TIMEOUT });
    logger.info({ config: redactConfig(config) }, 'starting');

    const http = createHttpServer({
      port: config.ICEPACK_HTTP_PORT,
      host: config.ICEPACK_HTTP_HOST,
      logger,
      readiness: [],
    });
    await http.listen();
    lifecycle.onShutdown('http server', () => http.close());
  },
  { service: 'planner' },
);
