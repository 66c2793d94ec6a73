import type { CatalogAuth } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { kubernetesJobCredentials } from './job-credentials.ts';

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
