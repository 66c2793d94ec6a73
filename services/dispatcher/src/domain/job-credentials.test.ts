import type { CatalogAuth } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { kubernetesJobCredentials, localJobCredentials } from './job-credentials.ts';

describe('kubernetesJobCredentials', () => {
  it.each<[string, CatalogAuth, string | undefined, unknown]>([
    ['no auth', { type: 'none' }, undefined, { ok: true, env: [] }],
    [
      'bearer from a Secret',
      { type: 'bearer', token: { secret: { name: 's', key: 'k' } } },
      undefined,
      {
        ok: true,
        env: [
          { name: 'ICEPACK_CATALOG_TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
        ],
      },
    ],
    [
      'oauth2 without client id: the secret is the credential',
      { type: 'oauth2', clientSecret: { secret: { name: 's', key: 'k' } } },
      undefined,
      {
        ok: true,
        env: [
          {
            name: 'ICEPACK_CATALOG_CREDENTIAL',
            valueFrom: { secretKeyRef: { name: 's', key: 'k' } },
          },
        ],
      },
    ],
    [
      'oauth2 with a client id: joined by the kubelet, `$` escaped',
      { type: 'oauth2', clientId: 'ice$pack', clientSecret: { secret: { name: 's', key: 'k' } } },
      undefined,
      {
        ok: true,
        env: [
          {
            name: 'ICEPACK_CATALOG_CLIENT_SECRET',
            valueFrom: { secretKeyRef: { name: 's', key: 'k' } },
          },
          {
            name: 'ICEPACK_CATALOG_CREDENTIAL',
            value: 'ice$$pack:$(ICEPACK_CATALOG_CLIENT_SECRET)',
          },
        ],
      },
    ],
    [
      'a file reference with the fallback Secret',
      { type: 'oauth2', clientSecret: { file: '/var/run/secrets/icepack/x' } },
      'fallback',
      { ok: true, env: [] },
    ],
  ])('%s', (_title, auth, fallback, expected) => {
    expect(kubernetesJobCredentials(auth, fallback)).toEqual(expected);
  });

  it('refuses a file reference without the fallback Secret, naming the field', () => {
    const result = kubernetesJobCredentials(
      { type: 'oauth2', clientSecret: { file: '/var/run/secrets/icepack/x' } },
      undefined,
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem).toMatch(
      /^catalog auth\.clientSecret: .*file \/var\/run\/secrets\/icepack\/x/,
    );
  });
});

describe('localJobCredentials', () => {
  // A resolver like the dispatcher's: values by env name, an error naming the field otherwise.
  const resolve = (ref: unknown, field: string): string => {
    const values: Record<string, string> = { ICEPACK_SECRET_A: 's3cr$t' };
    const name = (ref as { env?: string }).env;
    const value = name === undefined ? undefined : values[name];
    if (value === undefined)
      throw new Error(`${field}: environment variable ${name ?? '?'} is not set`);
    return value;
  };

  it.each<[string, CatalogAuth, Record<string, string>]>([
    ['no auth: no variable', { type: 'none' }, {}],
    [
      'bearer: the token',
      { type: 'bearer', token: { env: 'ICEPACK_SECRET_A' } },
      { ICEPACK_CATALOG_TOKEN: 's3cr$t' },
    ],
    [
      'oauth2 without client id: the secret is the credential',
      { type: 'oauth2', clientSecret: { env: 'ICEPACK_SECRET_A' } },
      { ICEPACK_CATALOG_CREDENTIAL: 's3cr$t' },
    ],
    [
      'oauth2 with a client id: `<id>:<secret>`, nothing escaped (no kubelet expands it)',
      { type: 'oauth2', clientId: 'ice$pack', clientSecret: { env: 'ICEPACK_SECRET_A' } },
      { ICEPACK_CATALOG_CREDENTIAL: 'ice$pack:s3cr$t' },
    ],
  ])('%s', (_title, auth, env) => {
    expect(localJobCredentials(auth, resolve)).toEqual({ ok: true, env });
  });

  it('names the field of a reference that cannot be resolved, and gives no value', () => {
    expect(
      localJobCredentials(
        { type: 'oauth2', clientId: 'c', clientSecret: { env: 'ICEPACK_SECRET_MISSING' } },
        resolve,
      ),
    ).toEqual({
      ok: false,
      problem: 'catalog auth.clientSecret: environment variable ICEPACK_SECRET_MISSING is not set',
    });
  });
});
