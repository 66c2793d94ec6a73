// deploy/local/icepack.env is the local stack's embedded configuration; its header promises
// that every line can be overridden by exporting the variable before ./dev. services.sh
// sources it with `set -a`, so a plain `NAME=value` line would overwrite the exported value.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { LOCAL_ENV_FILE as envFile, localEnvNames } from './local-env.ts';

const names = localEnvNames();

describe('deploy/local/icepack.env', () => {
  it('sets some variables', () => {
    expect(names).toContain('ICEPACK_LOG_LEVEL');
  });

  it.each(names)('lets an exported %s win over its line', (name) => {
    const sentinel = 'exported-by-the-caller';
    const value = execFileSync(
      'bash',
      ['-c', `set -a; source "${envFile}"; set +a; printf '%s' "\${${name}}"`],
      {
        env: {
          PATH: process.env.PATH,
          ICEPACK_RUN: '/tmp/icepack-run',
          ICEPACK_KAFKA_PORT: '19092',
          ICEPACK_REDIS_PORT: '16379',
          ICEPACK_CATALOG_PORT: '18181',
          [name]: sentinel,
        },
        encoding: 'utf8',
      },
    );
    expect(value).toBe(sentinel);
  });
});
