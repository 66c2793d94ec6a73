import type { RedisOptions } from 'ioredis';
import type { BaseConfig } from '../config/base-config.ts';
import { ConfigError } from '../config/config-error.ts';
import { tlsOptions, type ReadConfigFile } from '../kafka/kafka-transport.ts';

type RedisTransportConfig = Pick<
  BaseConfig,
  | 'ICEPACK_REDIS_URL'
  | 'ICEPACK_REDIS_USERNAME'
  | 'ICEPACK_REDIS_PASSWORD'
  | 'ICEPACK_REDIS_TLS'
  | 'ICEPACK_REDIS_TLS_CA_FILE'
  | 'ICEPACK_REDIS_TLS_CERT_FILE'
  | 'ICEPACK_REDIS_TLS_KEY_FILE'
>;

/**
 * The ioredis options for the Redis ACL user and TLS. The user and password may come from
 * `ICEPACK_REDIS_USERNAME`/`ICEPACK_REDIS_PASSWORD` (the password from a mounted Secret via
 * `_FILE`) or from the URL, not both. A `rediss://` URL turns TLS on like `ICEPACK_REDIS_TLS`.
 * Throws a {@link ConfigError} naming the variables; never quotes a secret.
 */
export function redisTransport(
  config: RedisTransportConfig,
  read: ReadConfigFile,
): Pick<RedisOptions, 'username' | 'password' | 'tls'> {
  const problems: string[] = [];
  const url = new URL(config.ICEPACK_REDIS_URL);
  const username = config.ICEPACK_REDIS_USERNAME;
  const password = config.ICEPACK_REDIS_PASSWORD;
  if (url.username !== '' && username !== undefined) {
    problems.push('ICEPACK_REDIS_USERNAME: set, but ICEPACK_REDIS_URL names a user too');
  }
  if (url.password !== '' && password !== undefined) {
    problems.push('ICEPACK_REDIS_PASSWORD: set, but ICEPACK_REDIS_URL holds a password too');
  }
  if (username !== undefined && password === undefined && url.password === '') {
    problems.push('ICEPACK_REDIS_PASSWORD: required with ICEPACK_REDIS_USERNAME');
  }
  const tls = tlsOptions('ICEPACK_REDIS', {
    enabled: config.ICEPACK_REDIS_TLS || url.protocol === 'rediss:',
    caFile: config.ICEPACK_REDIS_TLS_CA_FILE,
    certFile: config.ICEPACK_REDIS_TLS_CERT_FILE,
    keyFile: config.ICEPACK_REDIS_TLS_KEY_FILE,
    read,
    problems,
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    ...(tls === undefined ? {} : { tls: tls === true ? {} : tls }),
  };
}
