import { parseCatalog } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import {
  addressProblem,
  catalogAccessProblems,
  defaultCatalogAccessPolicy,
  hostProblem,
  propertyValueProblem,
  secretRefProblem,
} from './catalog-access-policy.ts';

const policy = defaultCatalogAccessPolicy;

describe('secretRefProblem', () => {
  it.each([
    [{ env: 'ICEPACK_SECRET_LAKE_TOKEN' }, undefined],
    [{ env: 'ICEPACK_REDIS_URL' }, /must start with ICEPACK_SECRET_/],
    [{ env: 'ICEPACK_SECRET_' }, /must start with/],
    [{ env: 'AWS_SECRET_ACCESS_KEY' }, /must start with/],
    [{ file: '/var/run/secrets/icepack/lake/token' }, undefined],
    [{ file: '/var/run/secrets/icepack' }, /outside the secrets directory/],
    [{ file: '/var/run/secrets/kubernetes.io/serviceaccount/token' }, /outside/],
    [{ file: '/var/run/secrets/icepack/../kubernetes.io/serviceaccount/token' }, /outside/],
    [{ file: '/var/run/secrets/icepack-evil/token' }, /outside/],
    [{ secret: { name: 'lake', key: 'token' } }, undefined],
    [{ secret: { name: '..', key: 'x' } }, /outside/],
  ])('%j → %s', (ref, expected) => {
    const problem = secretRefProblem(ref, policy);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(expected);
  });
});

describe('addressProblem / hostProblem', () => {
  it.each([
    ['169.254.169.254', /link-local/],
    ['169.254.170.2', /link-local/],
    ['100.100.100.200', /metadata/],
    ['fe80::1', /link-local/],
    ['febf::1', /link-local/],
    ['fd00:ec2::254', /metadata/],
    ['fd00:ec2:0:0:0:0:0:254', /metadata/],
    // EKS Pod Identity's credential endpoint and GCE's IPv6 metadata server.
    ['fd00:ec2::23', /metadata/],
    ['[fd20:ce::254]', /metadata/],
    ['fd20:ce:0::254', /metadata/],
    ['::ffff:169.254.169.254', /link-local/],
    ['metadata.google.internal', /metadata host/],
    ['METADATA.GOOGLE.INTERNAL.', /metadata host/],
    // The rest of the names docs/security.md lists.
    ['metadata.goog', /metadata host/],
    ['metadata', /metadata host/],
    ['instance-data', /metadata host/],
    ['Instance-Data.EC2.Internal.', /metadata host/],
    ['metadata.azure.internal', /metadata host/],
    ['127.0.0.1', undefined],
    ['10.0.0.1', undefined],
    ['fec0::1', undefined],
    ['fd00:ec2::253', undefined],
    ['iceberg-rest', undefined],
  ])('%s → %s', (host, expected) => {
    const problem = hostProblem(host);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(expected);
  });

  it('judges bracketed IPv6 literals as URLs give them', () => {
    expect(addressProblem('[fe80::1]')).toMatch(/link-local/);
  });

  it('refuses IPv4-mapped addresses in the hex form a URL normalises them to', () => {
    // new URL('http://[::ffff:169.254.169.254]/').hostname is '[::ffff:a9fe:a9fe]'.
    for (const host of ['[::ffff:169.254.169.254]', '[0:0:0:0:0:ffff:a9fe:a9fe]']) {
      expect(hostProblem(new URL(`http://${host}/`).hostname)).toMatch(/link-local/);
    }
    expect(hostProblem(new URL('http://[::ffff:100.100.100.200]/').hostname)).toMatch(/metadata/);
    expect(hostProblem('::ffff:a9fe:a9fe')).toMatch(/link-local/);
    expect(hostProblem('::ffff:7f00:1')).toBeUndefined();
  });
});

describe('propertyValueProblem', () => {
  it('refuses an http(s) URL on a link-local or metadata address, naming the host only', () => {
    // A catalog's answers (`s3.endpoint` in its config or a table's) pass the same rule.
    expect(propertyValueProblem(' http://[::ffff:a9fe:a9fe]/', policy)).toMatch(/link-local/);
    expect(propertyValueProblem('http://instance-data/latest/', policy)).toMatch(/metadata host/);
    const withCredentials = propertyValueProblem('http://AKIA:hunter2@169.254.169.254/', policy);
    expect(withCredentials).toMatch(/^169\.254\.169\.254 is a link-local address/);
    expect(withCredentials).not.toMatch(/AKIA|hunter2/);
  });

  it('passes other values, and every value when link-local addresses are allowed', () => {
    expect(propertyValueProblem('https://s3.eu-west-1.amazonaws.com', policy)).toBeUndefined();
    expect(propertyValueProblem('http://127.0.0.1:9000', policy)).toBeUndefined();
    expect(propertyValueProblem('eu-west-1', policy)).toBeUndefined();
    expect(
      propertyValueProblem('http://169.254.169.254', { ...policy, allowLinkLocal: true }),
    ).toBeUndefined();
  });
});

describe('catalogAccessProblems', () => {
  const base = { name: 'lake', type: 'rest', uri: 'https://catalog.example.com' };

  it('refuses a catalog uri on an IPv4-mapped link-local address', () => {
    const catalog = parseCatalog({ ...base, uri: 'http://[::ffff:169.254.169.254]/' });
    expect(catalogAccessProblems(catalog, policy).map((p) => p.path)).toEqual(['uri']);
  });

  it('names each refused field', () => {
    const catalog = parseCatalog({
      ...base,
      uri: 'http://169.254.169.254',
      auth: {
        type: 'oauth2',
        serverUri: 'http://metadata.google.internal/token',
        clientSecret: { env: 'ICEPACK_REDIS_URL' },
      },
    });
    expect(catalogAccessProblems(catalog, policy).map((p) => p.path)).toEqual([
      'auth.clientSecret',
      'uri',
      'auth.serverUri',
    ]);
  });

  it('refuses the same addresses as properties, which the Spark job takes over the fields', () => {
    // catalogSparkConf sets properties last: `oauth2-server-uri` replaces auth.serverUri in
    // the job, `s3.endpoint` and `s3.signer.uri` are called with the job's credentials.
    const catalog = parseCatalog({
      ...base,
      auth: {
        type: 'oauth2',
        serverUri: 'https://auth.example.com/token',
        clientSecret: { secret: { name: 'lake', key: 'secret' } },
      },
      properties: {
        'oauth2-server-uri': 'http://169.254.170.2/v2/credentials',
        's3.endpoint': ' http://[::ffff:a9fe:a9fe]',
        's3.signer.uri': 'http://metadata.google.internal/',
        'client.region': 'eu-west-1',
        's3.path-style-access': 'true',
        'gcs.service.host': 'https://storage.example.com',
      },
    });
    expect(catalogAccessProblems(catalog, policy).map((p) => p.path)).toEqual([
      'properties.oauth2-server-uri',
      'properties.s3.endpoint',
      'properties.s3.signer.uri',
    ]);
    expect(catalogAccessProblems(catalog, { ...policy, allowLinkLocal: true })).toEqual([]);
  });

  it('allows link-local addresses when configured, never other secret sources', () => {
    const catalog = parseCatalog({
      ...base,
      uri: 'http://169.254.1.1:8181',
      auth: { type: 'bearer', token: { env: 'HOME' } },
    });
    expect(
      catalogAccessProblems(catalog, { ...policy, allowLinkLocal: true }).map((p) => p.path),
    ).toEqual(['auth.token']);
  });

  it('accepts an ordinary definition', () => {
    const catalog = parseCatalog({
      ...base,
      auth: { type: 'bearer', token: { secret: { name: 'lake', key: 'token' } } },
    });
    expect(catalogAccessProblems(catalog, policy)).toEqual([]);
  });
});
