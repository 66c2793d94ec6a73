import { describe, expect, it } from 'vitest';
import { IcebergError } from '../errors/iceberg-error.ts';
import { refreshExpiring, S3ClientPool, type ExpiringCredentials } from './s3-client-pool.ts';

const connection = { 's3.endpoint': 'http://127.0.0.1:1', 's3.path-style-access': 'true' };
const keys = (id: string) => ({
  ...connection,
  's3.access-key-id': id,
  's3.secret-access-key': `secret-${id}`,
});

describe('the S3 client pool', () => {
  it('reuses one client per connection settings and credential set', () => {
    const pool = new S3ClientPool();
    const a = pool.client(keys('a'), 's3://lake/t1/');
    expect(pool.client(keys('a'), 's3://lake/t2/')).toBe(a); // same static keys: same client
    expect(pool.client(keys('b'), 's3://lake/t1/')).not.toBe(a);
    expect(pool.client({ ...keys('a'), 's3.endpoint': 'http://127.0.0.1:2' }, '')).not.toBe(a);
    expect(pool.client(connection, '')).toBe(pool.client(connection, '')); // default chain
    expect(pool.created).toBe(4);
    pool.close();
  });

  it('keys expiring credentials by prefix, so a new set for the prefix keeps the client', () => {
    const pool = new S3ClientPool({ now: () => 0 });
    const first = pool.client(
      { ...keys('ASIA1'), 's3.session-token': 't1', 's3.session-token-expires-at-ms': '60000' },
      's3://lake/t1/',
    );
    const again = pool.client(
      { ...keys('ASIA2'), 's3.session-token': 't2', 's3.session-token-expires-at-ms': '120000' },
      's3://lake/t1/',
    );
    expect(again).toBe(first);
    const other = pool.client(
      { ...keys('ASIA3'), 's3.session-token': 't3', 's3.session-token-expires-at-ms': '60000' },
      's3://lake/t2/',
    );
    expect(other).not.toBe(first);
    expect(pool.created).toBe(2);
    pool.close();
  });

  it('is bounded: the least recently used client is evicted and closed', async () => {
    const pool = new S3ClientPool({ maxClients: 2 });
    const a = pool.client(keys('a'), '');
    const b = pool.client(keys('b'), '');
    expect(pool.client(keys('a'), '')).toBe(a); // a is now the most recently used
    pool.client(keys('c'), ''); // evicts b
    expect(pool.size).toBe(2);
    expect(pool.evicted).toBe(1);
    const error = await b.read('s3://lake/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IcebergError);
    expect((error as IcebergError).message).toContain('s3 client closed');
    expect(pool.client(keys('a'), '')).toBe(a);
    expect(pool.client(keys('b'), '')).not.toBe(b); // built again
    pool.close();
  });
});

describe('refreshing vended credentials', () => {
  const MIN = 60_000;
  const state = (refresh: ExpiringCredentials['refresh']): ExpiringCredentials => ({
    current: { accessKeyId: 'old', secretAccessKey: 'old-secret', sessionToken: 'old-token' },
    lifetime: { issuedAtMs: 0, expiresAtMs: 60 * MIN },
    refresh,
    pending: undefined,
  });
  const fresh = (id: string, expiresAt: number) => () =>
    Promise.resolve({
      's3.access-key-id': id,
      's3.secret-access-key': `${id}-secret`,
      's3.session-token': `${id}-token`,
      's3.session-token-expires-at-ms': String(expiresAt),
    });

  it('keeps the credentials until the margin before expiry, then takes fresh ones', async () => {
    let now = 0;
    let calls = 0;
    const refresh = fresh('new', 120 * MIN);
    const s = state(() => {
      calls++;
      return refresh();
    });
    now = 55 * MIN - 1;
    await refreshExpiring(s, () => now, 5 * MIN);
    expect(calls).toBe(0);
    expect(s.current.accessKeyId).toBe('old');
    now = 55 * MIN;
    await refreshExpiring(s, () => now, 5 * MIN);
    expect(calls).toBe(1);
    expect(s.current).toEqual({
      accessKeyId: 'new',
      secretAccessKey: 'new-secret',
      sessionToken: 'new-token',
    });
    expect(s.lifetime).toEqual({ issuedAtMs: 55 * MIN, expiresAtMs: 120 * MIN });
    await refreshExpiring(s, () => now, 5 * MIN);
    expect(calls).toBe(1); // fresh until 115 min
  });

  it('asks once however many callers wait', async () => {
    let calls = 0;
    const refresh = fresh('new', 120 * MIN);
    const s = state(() => {
      calls++;
      return refresh();
    });
    await Promise.all([1, 2, 3].map(() => refreshExpiring(s, () => 58 * MIN, 5 * MIN)));
    expect(calls).toBe(1);
  });

  it('keeps the current credentials when a refresh fails before expiry, and fails after', async () => {
    const failing = () => Promise.reject(new Error('catalog down'));
    const s = state(failing);
    await refreshExpiring(s, () => 58 * MIN, 5 * MIN);
    expect(s.current.accessKeyId).toBe('old');
    await expect(refreshExpiring(s, () => 60 * MIN, 5 * MIN)).rejects.toThrow('catalog down');
  });

  it('ignores an answer that expires no later than what it has', async () => {
    const s = state(fresh('older', 30 * MIN));
    await refreshExpiring(s, () => 58 * MIN, 5 * MIN);
    expect(s.current.accessKeyId).toBe('old');
  });
});
