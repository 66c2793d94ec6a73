import type { ConnectionOptions } from 'node:tls';
import type { SASLOptions } from 'kafkajs';
import type { BaseConfig } from '../config/base-config.ts';
import { ConfigError } from '../config/config-error.ts';

/** Reads a file given by a config variable (CA, certificate, key, token); UTF-8. */
export type ReadConfigFile = (path: string) => string;

/** What kafkajs needs to reach a secured cluster: `ssl` and `sasl` of its client config. */
export interface KafkaTransport {
  /** `true`: TLS with the system CAs; an object: TLS with these CAs / client certificate. */
  readonly ssl?: boolean | ConnectionOptions;
  readonly sasl?: SASLOptions;
}

type KafkaTransportConfig = Pick<
  BaseConfig,
  | 'ICEPACK_KAFKA_TLS'
  | 'ICEPACK_KAFKA_TLS_CA_FILE'
  | 'ICEPACK_KAFKA_TLS_CERT_FILE'
  | 'ICEPACK_KAFKA_TLS_KEY_FILE'
  | 'ICEPACK_KAFKA_SASL_MECHANISM'
  | 'ICEPACK_KAFKA_SASL_USERNAME'
  | 'ICEPACK_KAFKA_SASL_PASSWORD'
  | 'ICEPACK_KAFKA_SASL_OAUTH_TOKEN_FILE'
>;

/**
 * The Kafka clients' TLS and SASL settings from the config. Throws a {@link ConfigError}
 * naming every variable that is missing or contradicts another; never quotes a secret.
 * TLS files are read once here; the OAUTHBEARER token file is read again on every
 * (re-)authentication, so a rotated token is picked up without a restart.
 */
export function kafkaTransport(config: KafkaTransportConfig, read: ReadConfigFile): KafkaTransport {
  const problems: string[] = [];
  const ssl = tlsOptions('ICEPACK_KAFKA', {
    enabled: config.ICEPACK_KAFKA_TLS,
    caFile: config.ICEPACK_KAFKA_TLS_CA_FILE,
    certFile: config.ICEPACK_KAFKA_TLS_CERT_FILE,
    keyFile: config.ICEPACK_KAFKA_TLS_KEY_FILE,
    read,
    problems,
  });
  const mechanism = config.ICEPACK_KAFKA_SASL_MECHANISM;
  const username = config.ICEPACK_KAFKA_SASL_USERNAME;
  const password = config.ICEPACK_KAFKA_SASL_PASSWORD;
  const tokenFile = config.ICEPACK_KAFKA_SASL_OAUTH_TOKEN_FILE;
  let sasl: SASLOptions | undefined;
  if (mechanism === 'none') {
    for (const [name, value] of [
      ['ICEPACK_KAFKA_SASL_USERNAME', username],
      ['ICEPACK_KAFKA_SASL_PASSWORD', password],
      ['ICEPACK_KAFKA_SASL_OAUTH_TOKEN_FILE', tokenFile],
    ] as const) {
      if (value !== undefined) {
        problems.push(`${name}: set, but ICEPACK_KAFKA_SASL_MECHANISM is none`);
      }
    }
  } else if (mechanism === 'oauthbearer') {
    if (tokenFile === undefined) {
      problems.push(
        'ICEPACK_KAFKA_SASL_OAUTH_TOKEN_FILE: required when the mechanism is oauthbearer',
      );
    } else {
      sasl = {
        mechanism,
        oauthBearerProvider: () => {
          try {
            return Promise.resolve({ value: read(tokenFile).trim() });
          } catch (error) {
            return Promise.reject(
              new Error(
                `ICEPACK_KAFKA_SASL_OAUTH_TOKEN_FILE: cannot read ${tokenFile}: ${errorCode(error)}`,
              ),
            );
          }
        },
      };
    }
  } else {
    if (username === undefined) {
      problems.push(`ICEPACK_KAFKA_SASL_USERNAME: required when the mechanism is ${mechanism}`);
    }
    if (password === undefined) {
      problems.push(
        `ICEPACK_KAFKA_SASL_PASSWORD: required when the mechanism is ${mechanism} (or ICEPACK_KAFKA_SASL_PASSWORD_FILE)`,
      );
    }
    if (username !== undefined && password !== undefined) {
      sasl = { mechanism, username, password };
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    ...(ssl === undefined ? {} : { ssl }),
    ...(sasl === undefined ? {} : { sasl }),
  };
}

export interface TlsFiles {
  readonly enabled: boolean;
  readonly caFile: string | undefined;
  readonly certFile: string | undefined;
  readonly keyFile: string | undefined;
  readonly read: ReadConfigFile;
  /** Problems are added here, each naming its variable. */
  readonly problems: string[];
}

/**
 * TLS options from `<PREFIX>_TLS*` variables (Kafka and Redis share the shape): `undefined`
 * when TLS is off, `true` for TLS with the system CAs, otherwise the CA bundle and the
 * client certificate (both halves required together). The server certificate is always
 * verified.
 */
export function tlsOptions(prefix: string, files: TlsFiles): true | ConnectionOptions | undefined {
  const { problems } = files;
  const set = { CA_FILE: files.caFile, CERT_FILE: files.certFile, KEY_FILE: files.keyFile };
  if (!files.enabled) {
    for (const [suffix, value] of Object.entries(set)) {
      if (value !== undefined)
        problems.push(`${prefix}_TLS_${suffix}: set, but ${prefix}_TLS is off`);
    }
    return undefined;
  }
  if ((files.certFile === undefined) !== (files.keyFile === undefined)) {
    problems.push(
      `${prefix}_TLS_${files.certFile === undefined ? 'CERT_FILE' : 'KEY_FILE'}: required with ${prefix}_TLS_${files.certFile === undefined ? 'KEY_FILE' : 'CERT_FILE'} (a client certificate needs both)`,
    );
  }
  const options: { ca?: string; cert?: string; key?: string } = {};
  const load = (suffix: keyof typeof set, key: 'ca' | 'cert' | 'key') => {
    const path = set[suffix];
    if (path === undefined) return;
    try {
      options[key] = files.read(path);
    } catch (error) {
      problems.push(`${prefix}_TLS_${suffix}: cannot read ${path}: ${errorCode(error)}`);
    }
  };
  load('CA_FILE', 'ca');
  load('CERT_FILE', 'cert');
  load('KEY_FILE', 'key');
  return Object.keys(options).length === 0 ? true : { ...options, rejectUnauthorized: true };
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}
