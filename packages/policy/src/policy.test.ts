import { describe, expect, it } from 'vitest';
import {
  catalogPolicyIssues,
  formatProblem,
  measuredUnderOtherPolicy,
  policyLayers,
  resolvePolicy,
  settingsProblems,
} from './policy.ts';
import { PolicyDefaults } from './policy-keys.ts';

const MiB = 1024 * 1024;

describe('resolvePolicy defaults', () => {
  it('uses the documented defaults for a table without properties', () => {
    const { policy, problems } = resolvePolicy({});
    expect(problems).toEqual([]);
    expect(policy).toMatchObject({
      enabled: true,
      pausedBy: null,
      taskTypes: { cleanup: true, merge: true, sort: true, orphans: false },
      targetFileSizeBytes: 512 * MiB,
      minFileSizeBytes: 384 * MiB,
      maxFileSizeBytes: Math.floor(512 * MiB * 1.8),
      smallFileThreshold: 20,
      deleteFileThreshold: 10,
      newDataShare: 0.3,
      snapshotThreshold: 50,
      maxSnapshotAgeMs: 5 * 24 * 3600 * 1000,
      minSnapshotsToKeep: 1,
      minIntervalMs: { cleanup: 3_600_000, merge: 300_000, sort: 3_600_000, orphans: 604_800_000 },
      failureBackoff: { baseMs: 300_000, maxMs: 21_600_000 },
      gcEnabled: true,
      sortColumns: [],
      zorderColumns: [],
      hilbertColumns: [],
    });
  });

  it('reads the failure back-off as durations; a bad one names the key and keeps the default', () => {
    const { policy, problems } = resolvePolicy(
      { 'icepack.failure-backoff': '1m', 'icepack.failure-backoff-max': 'never' },
      { catalog: { 'icepack.failure-backoff-max': '2h' } },
    );
    expect(policy.failureBackoff).toEqual({ baseMs: 60_000, maxMs: 7_200_000 });
    expect(problems.map(formatProblem)).toEqual([
      'bad policy value icepack.failure-backoff-max="never" (table): expected a duration such as 30s, 10m, 1h or 2d; using 7200000',
    ]);
  });

  it('reads min intervals as durations; a bad one names the key and keeps the default', () => {
    const { policy, problems } = resolvePolicy(
      { 'icepack.merge.min-interval': '30m', 'icepack.sort.min-interval': 'soon' },
      { catalog: { 'icepack.cleanup.min-interval': '2h' } },
    );
    expect(policy.minIntervalMs).toEqual({
      cleanup: 7_200_000,
      merge: 1_800_000,
      sort: 3_600_000,
      orphans: PolicyDefaults.minIntervalMs.orphans,
    });
    expect(problems.map(formatProblem)).toEqual([
      'bad policy value icepack.sort.min-interval="soon" (table): expected a duration such as 30s, 10m, 1h or 2d; using 3600000',
    ]);
  });

  it.each<{ props: Record<string, string>; cleanup: number }>([
    // Iceberg's 5-day default retention: the hourly default.
    { props: {}, cleanup: 3_600_000 },
    // A 10-minute retention: cleaned up every 10 minutes, so snapshots stay within ~20 minutes.
    { props: { 'history.expire.max-snapshot-age-ms': '600000' }, cleanup: 600_000 },
    { props: { 'icepack.history.expire.max-snapshot-age-ms': '1800000' }, cleanup: 1_800_000 },
    // Never more often than the floor, whatever the retention.
    { props: { 'history.expire.max-snapshot-age-ms': '0' }, cleanup: 300_000 },
    // A set interval wins over the retention.
    {
      props: {
        'history.expire.max-snapshot-age-ms': '600000',
        'icepack.cleanup.min-interval': '2h',
      },
      cleanup: 7_200_000,
    },
  ])(
    'the cleanup interval follows a retention shorter than an hour: $props',
    ({ props, cleanup }) => {
      const { policy, problems } = resolvePolicy(props);
      expect(problems).toEqual([]);
      expect(policy.minIntervalMs.cleanup).toBe(cleanup);
    },
  );

  it.each([
    { value: undefined, gcEnabled: true },
    { value: 'true', gcEnabled: true },
    { value: 'TRUE', gcEnabled: true },
    { value: 'false', gcEnabled: false },
    { value: 'no', gcEnabled: false }, // Java's Boolean.parseBoolean: anything but "true"
  ])('gc.enabled=$value → gcEnabled $gcEnabled', ({ value, gcEnabled }) => {
    const props: Record<string, string> = value === undefined ? {} : { 'gc.enabled': value };
    expect(resolvePolicy(props).policy.gcEnabled).toBe(gcEnabled);
  });

  it("follows the table's Iceberg properties for file size and retention", () => {
    const { policy } = resolvePolicy({
      'write.target-file-size-bytes': String(128 * MiB),
      'history.expire.max-snapshot-age-ms': '3600000',
      'history.expire.min-snapshots-to-keep': '5',
    });
    expect(policy.targetFileSizeBytes).toBe(128 * MiB);
    expect(policy.minFileSizeBytes).toBe(96 * MiB);
    expect(policy.maxFileSizeBytes).toBe(Math.floor(128 * MiB * 1.8));
    expect(policy.maxSnapshotAgeMs).toBe(3_600_000);
    expect(policy.minSnapshotsToKeep).toBe(5);
  });
});

describe('resolvePolicy layering: defaults ← catalog ← table', () => {
  it.each<{
    name: string;
    catalog: Record<string, string>;
    table: Record<string, string>;
    expected: number;
  }>([
    { name: 'default only', catalog: {}, table: {}, expected: 20 },
    {
      name: 'catalog overrides default',
      catalog: { 'icepack.small-file-threshold': '30' },
      table: {},
      expected: 30,
    },
    {
      name: 'table overrides catalog',
      catalog: { 'icepack.small-file-threshold': '30' },
      table: { 'icepack.small-file-threshold': '40' },
      expected: 40,
    },
  ])('$name', ({ catalog, table, expected }) => {
    expect(resolvePolicy(table, { catalog }).policy.smallFileThreshold).toBe(expected);
  });

  it('icepack.* beats the Iceberg property, which beats the catalog setting', () => {
    const catalog = { 'icepack.target-file-size-bytes': String(64 * MiB) };
    expect(resolvePolicy({}, { catalog }).policy.targetFileSizeBytes).toBe(64 * MiB);
    const iceberg = { 'write.target-file-size-bytes': String(256 * MiB) };
    expect(resolvePolicy(iceberg, { catalog }).policy.targetFileSizeBytes).toBe(256 * MiB);
    const both = { ...iceberg, 'icepack.target-file-size-bytes': String(32 * MiB) };
    expect(resolvePolicy(both, { catalog }).policy.targetFileSizeBytes).toBe(32 * MiB);
  });

  it('pauses a table, or a whole catalog, with icepack.enabled=false', () => {
    expect(resolvePolicy({ 'icepack.enabled': 'false' }).policy).toMatchObject({
      enabled: false,
      pausedBy: 'table',
    });
    expect(resolvePolicy({}, { catalog: { 'icepack.enabled': 'FALSE' } }).policy).toMatchObject({
      enabled: false,
      pausedBy: 'catalog',
    });
    // A table cannot re-enable itself inside a paused catalog.
    expect(
      resolvePolicy({ 'icepack.enabled': 'true' }, { catalog: { 'icepack.enabled': 'false' } })
        .policy.enabled,
    ).toBe(false);
  });

  it('enables and disables task types', () => {
    const { policy } = resolvePolicy({
      'icepack.cleanup.enabled': 'false',
      'icepack.sort.enabled': 'true',
    });
    expect(policy.taskTypes).toEqual({ cleanup: false, merge: true, sort: true, orphans: false });
  });

  it('reads sort and z-order columns', () => {
    expect(
      resolvePolicy({ 'icepack.sort.columns': 'customer_id, ts DESC, region asc nulls last' })
        .policy.sortColumns,
    ).toEqual([
      { name: 'customer_id', direction: 'asc', nullOrder: 'nulls-first' },
      { name: 'ts', direction: 'desc', nullOrder: 'nulls-last' },
      { name: 'region', direction: 'asc', nullOrder: 'nulls-last' },
    ]);
    expect(resolvePolicy({ 'icepack.zorder.columns': 'lat,lon' }).policy.zorderColumns).toEqual([
      'lat',
      'lon',
    ]);
    expect(
      resolvePolicy({ 'icepack.hilbert.columns': ' lat , lon ' }).policy.hilbertColumns,
    ).toEqual(['lat', 'lon']);
  });

  it('reads a new-data share as a fraction or a percentage', () => {
    expect(resolvePolicy({ 'icepack.sort.new-data-share': '0.5' }).policy.newDataShare).toBe(0.5);
    expect(resolvePolicy({ 'icepack.sort.new-data-share': '25%' }).policy.newDataShare).toBe(0.25);
  });
});

describe('resolvePolicy bad values: reported, and the value below is used', () => {
  it.each([
    ['icepack.enabled', 'nope', 'enabled', true, /true or false/],
    [
      'icepack.small-file-threshold',
      'abc',
      'smallFileThreshold',
      PolicyDefaults.smallFileThreshold,
      /whole number/,
    ],
    [
      'icepack.small-file-threshold',
      '-1',
      'smallFileThreshold',
      PolicyDefaults.smallFileThreshold,
      /whole number/,
    ],
    [
      'icepack.small-file-threshold',
      '2.5',
      'smallFileThreshold',
      PolicyDefaults.smallFileThreshold,
      /whole number/,
    ],
    [
      'icepack.delete-file-threshold',
      '',
      'deleteFileThreshold',
      PolicyDefaults.deleteFileThreshold,
      /whole number/,
    ],
    [
      'icepack.snapshot-threshold',
      '1e3',
      'snapshotThreshold',
      PolicyDefaults.snapshotThreshold,
      /whole number/,
    ],
    [
      'icepack.sort.new-data-share',
      '1.5',
      'newDataShare',
      PolicyDefaults.newDataShare,
      /share between 0 and 1/,
    ],
    [
      'icepack.sort.new-data-share',
      '150%',
      'newDataShare',
      PolicyDefaults.newDataShare,
      /share between 0 and 1/,
    ],
    [
      'icepack.target-file-size-bytes',
      '0',
      'targetFileSizeBytes',
      PolicyDefaults.targetFileSizeBytes,
      /≥ 1/,
    ],
    [
      'write.target-file-size-bytes',
      '512MB',
      'targetFileSizeBytes',
      PolicyDefaults.targetFileSizeBytes,
      /whole number/,
    ],
    ['icepack.history.expire.min-snapshots-to-keep', '0', 'minSnapshotsToKeep', 1, /≥ 1/],
    ['icepack.sort.columns', 'a,,b', 'sortColumns', [], /comma-separated/],
    ['icepack.sort.columns', 'a sideways', 'sortColumns', [], /cannot read "a sideways"/],
    ['icepack.zorder.columns', 'a b', 'zorderColumns', [], /column names/],
    ['icepack.hilbert.columns', 'a', 'hilbertColumns', [], /2 different column names/],
    ['icepack.hilbert.columns', 'a,b,c', 'hilbertColumns', [], /2 different column names/],
    ['icepack.hilbert.columns', 'a,a', 'hilbertColumns', [], /2 different column names/],
    ['icepack.hilbert.columns', 'a,,b', 'hilbertColumns', [], /comma-separated/],
  ] as const)('%s=%j → problem, default used', (key, value, field, expected, reason) => {
    const { policy, problems } = resolvePolicy({ [key]: value });
    expect(policy[field]).toEqual(expected);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ key, value, source: 'table' });
    expect(problems[0]?.reason).toMatch(reason);
    expect(formatProblem(problems[0]!)).toContain(`${key}=${JSON.stringify(value)}`);
  });

  it('a bad table value falls back to the catalog setting, not the built-in default', () => {
    const { policy, problems } = resolvePolicy(
      { 'icepack.small-file-threshold': 'many' },
      { catalog: { 'icepack.small-file-threshold': '35' } },
    );
    expect(policy.smallFileThreshold).toBe(35);
    expect(problems[0]?.reason).toMatch(/using 35$/);
  });

  it('a bad catalog setting is reported with source catalog', () => {
    const { problems } = resolvePolicy({}, { catalog: { 'icepack.enabled': 'maybe' } });
    expect(problems).toEqual([
      expect.objectContaining({ key: 'icepack.enabled', value: 'maybe', source: 'catalog' }),
    ]);
  });

  it('rejects a min file size above the target and a max below it', () => {
    const { policy, problems } = resolvePolicy({
      'icepack.target-file-size-bytes': '1000',
      'icepack.min-file-size-bytes': '1001',
      'icepack.max-file-size-bytes': '999',
    });
    expect(policy).toMatchObject({
      targetFileSizeBytes: 1000,
      minFileSizeBytes: 750,
      maxFileSizeBytes: 1800,
    });
    expect(problems.map((p) => [p.key, p.value])).toEqual([
      ['icepack.min-file-size-bytes', '1001'],
      ['icepack.max-file-size-bytes', '999'],
    ]);
  });

  it('uses sort columns when z-order columns are set too, and says so', () => {
    const { policy, problems } = resolvePolicy({
      'icepack.sort.columns': 'a',
      'icepack.zorder.columns': 'b,c',
    });
    expect(policy.sortColumns.map((c) => c.name)).toEqual(['a']);
    expect(policy.zorderColumns).toEqual([]);
    expect(problems[0]?.key).toBe('icepack.zorder.columns');
  });

  it.each([
    [{ 'icepack.sort.columns': 'a' }, 'icepack.sort.columns'],
    [{ 'icepack.zorder.columns': 'a,b' }, 'icepack.zorder.columns'],
  ])('uses %j over Hilbert columns set too, and says so', (other, key) => {
    // The other layout from the catalog, Hilbert on the table: still one layout, named.
    const { policy, problems } = resolvePolicy(
      { 'icepack.hilbert.columns': 'x,y' },
      { catalog: other },
    );
    expect(policy.hilbertColumns).toEqual([]);
    expect(problems).toEqual([
      expect.objectContaining({
        key: 'icepack.hilbert.columns',
        value: 'x, y',
        source: 'table',
        reason: `${key} is set too; a table is sorted one way, so using ${key}`,
      }),
    ]);
  });

  it('reports unknown icepack.* keys (typos) and ignores other properties', () => {
    const { problems } = resolvePolicy({
      'icepack.small-files-threshold': '5',
      'write.format.default': 'parquet',
    });
    expect(problems).toEqual([
      expect.objectContaining({
        key: 'icepack.small-files-threshold',
        value: '5',
        reason: expect.stringMatching(/unknown/) as unknown,
      }),
    ]);
  });
});

describe('namespace overrides', () => {
  const catalogPolicy = {
    settings: { 'icepack.small-file-threshold': '30', 'icepack.snapshot-threshold': '70' },
    namespaces: {
      'sales.eu': { 'icepack.small-file-threshold': '40', 'icepack.enabled': 'false' },
    },
  };

  it('table property > namespace setting > catalog setting > default', () => {
    const layers = policyLayers(catalogPolicy, ['sales', 'eu']);
    expect(resolvePolicy({}, layers).policy).toMatchObject({
      smallFileThreshold: 40,
      snapshotThreshold: 70,
      deleteFileThreshold: 10,
    });
    expect(
      resolvePolicy({ 'icepack.small-file-threshold': '50' }, layers).policy.smallFileThreshold,
    ).toBe(50);
    // Another namespace (even a parent) gets the catalog setting only.
    expect(
      resolvePolicy({}, policyLayers(catalogPolicy, ['sales'])).policy.smallFileThreshold,
    ).toBe(30);
    expect(resolvePolicy({}, policyLayers(undefined, ['sales'])).policy.smallFileThreshold).toBe(
      20,
    );
  });

  it('a namespace pause holds whatever the table says, and names the namespace', () => {
    const layers = policyLayers(catalogPolicy, ['sales', 'eu']);
    expect(resolvePolicy({ 'icepack.enabled': 'true' }, layers).policy).toMatchObject({
      enabled: false,
      pausedBy: 'namespace',
    });
  });

  it('a console pause is the top layer: no property lifts it, it names the console, it changes nothing else', () => {
    const catalog = { settings: { 'icepack.enabled': 'true', 'icepack.snapshot-threshold': '70' } };
    const on = { 'icepack.enabled': 'true' };
    const paused = resolvePolicy(on, policyLayers(catalog, ['sales'], true)).policy;
    expect(paused).toMatchObject({ enabled: false, pausedBy: 'console', snapshotThreshold: 70 });
    // Over a pause of a lower layer, the console is named (it is the operator's act).
    expect(
      resolvePolicy({}, policyLayers(catalogPolicy, ['sales', 'eu'], true)).policy.pausedBy,
    ).toBe('console');
    // Without it, the layers below decide as before.
    const running = resolvePolicy(on, policyLayers(catalog, ['sales'])).policy;
    expect(running).toMatchObject({ enabled: true, pausedBy: null });
    expect({ ...paused, enabled: true, pausedBy: null }).toEqual(running);
  });

  it('a bad namespace value falls back to the catalog setting, reported with source namespace', () => {
    const { policy, problems } = resolvePolicy(
      {},
      {
        catalog: { 'icepack.small-file-threshold': '30' },
        namespace: { 'icepack.small-file-threshold': 'lots' },
      },
    );
    expect(policy.smallFileThreshold).toBe(30);
    expect(problems.map(formatProblem)).toEqual([
      'bad policy value icepack.small-file-threshold="lots" (namespace): expected a whole number ≥ 0; using 30',
    ]);
  });
});

describe('the small-file bound: one answer for the scanner, the planner and the job', () => {
  // Issue 17: the scanner counted files under 384 MiB as small for this table (it read only
  // write.target-file-size-bytes), while its merge ran with 96 MiB.
  it('a table with only icepack.target-file-size-bytes=128MiB: small below 96 MiB', () => {
    const { policy } = resolvePolicy({ 'icepack.target-file-size-bytes': String(128 * MiB) });
    expect(policy.targetFileSizeBytes).toBe(128 * MiB);
    expect(policy.minFileSizeBytes).toBe(96 * MiB);
  });

  it('a catalog-wide target applies to the bound as well', () => {
    const { policy } = resolvePolicy(
      {},
      { catalog: { 'icepack.target-file-size-bytes': String(64 * MiB) } },
    );
    expect(policy.minFileSizeBytes).toBe(48 * MiB);
  });

  it('reports a state measured under another bound than the policy in force', () => {
    const { policy } = resolvePolicy({ 'icepack.target-file-size-bytes': String(128 * MiB) });
    expect(measuredUnderOtherPolicy(96 * MiB, policy)).toBeNull();
    const problem = measuredUnderOtherPolicy(384 * MiB, policy);
    expect(problem).toMatchObject({
      key: 'icepack.min-file-size-bytes',
      value: String(384 * MiB),
      source: 'scan',
    });
    expect(formatProblem(problem!)).toBe(
      `policy mismatch icepack.min-file-size-bytes: the state counts files under ${384 * MiB} bytes as small, the policy in force ${96 * MiB}; its small-file figures are from another policy until the next scan`,
    );
  });
});

describe('settingsProblems (a catalog definition’s policy)', () => {
  it('accepts known keys with good values', () => {
    expect(
      settingsProblems({
        'icepack.small-file-threshold': '40',
        'icepack.merge.min-interval': '10m',
      }),
    ).toEqual([]);
  });

  it('names each bad key: unknown, not icepack.*, or a value its parser refuses', () => {
    expect(
      settingsProblems({
        'icepack.small-files-threshold': '5',
        'write.target-file-size-bytes': '1',
        'icepack.snapshot-threshold': 'lots',
      }).map((p) => p.key),
    ).toEqual([
      'write.target-file-size-bytes',
      'icepack.snapshot-threshold',
      'icepack.small-files-threshold',
    ]);
  });
});

describe('orphan files (icepack.orphan.*)', () => {
  const DAY = 24 * 3600 * 1000;

  it('is off by default, 3 days old at least, 7 days in quarantine, every 7 days', () => {
    const { policy, problems } = resolvePolicy({});
    expect(problems).toEqual([]);
    expect(policy.taskTypes.orphans).toBe(false);
    expect(policy.orphans).toEqual({
      minAgeMs: 3 * DAY,
      quarantineWindowMs: 7 * DAY,
      maxFiles: 10_000,
    });
    expect(policy.minIntervalMs.orphans).toBe(7 * DAY);
  });

  it('is turned on and tuned by a catalog setting or a table property', () => {
    const { policy, problems } = resolvePolicy(
      { 'icepack.orphan.min-age': '5d', 'icepack.orphan.max-files': '50' },
      {
        catalog: {
          'icepack.orphan.enabled': 'true',
          'icepack.orphan.quarantine-window': '14d',
          'icepack.orphan.interval': '1d',
        },
      },
    );
    expect(problems).toEqual([]);
    expect(policy.taskTypes.orphans).toBe(true);
    expect(policy.orphans).toEqual({
      minAgeMs: 5 * DAY,
      quarantineWindowMs: 14 * DAY,
      maxFiles: 50,
    });
    expect(policy.minIntervalMs.orphans).toBe(DAY);
  });

  it('refuses a min-age below one day, naming the key, and keeps the value below it', () => {
    const { policy, problems } = resolvePolicy(
      { 'icepack.orphan.min-age': '12h' },
      { catalog: { 'icepack.orphan.min-age': '2d' } },
    );
    expect(policy.orphans.minAgeMs).toBe(2 * DAY);
    expect(problems).toHaveLength(1);
    expect(formatProblem(problems[0]!)).toBe(
      'bad policy value icepack.orphan.min-age="12h" (table): must be at least 1d: ' +
        "a writer's files exist before its commit names them; using 172800000",
    );
    // A catalog definition with it is refused (the provisioner's 400), the field named.
    expect(catalogPolicyIssues({ settings: { 'icepack.orphan.min-age': '1h' } })).toEqual([
      {
        path: 'policy.settings["icepack.orphan.min-age"]',
        message: expect.stringContaining('must be at least 1d') as string,
      },
    ]);
    expect(resolvePolicy({ 'icepack.orphan.min-age': '1d' }).problems).toEqual([]);
  });
});
