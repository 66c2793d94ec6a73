import { parseCatalog, parseResourceGroup } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import {
  configMapObject,
  namespaceObject,
  resourceQuotaObject,
  roleBindingObject,
  roleObject,
} from './kube-objects.ts';

const group = parseResourceGroup({
  name: 'sales',
  catalog: 'lake',
  cpu: '8',
  memory: '32Gi',
  slots: 2,
  spark: { maxExecutors: 3, sparkConf: { 'spark.sql.shuffle.partitions': '64' } },
});
const catalog = parseCatalog({
  name: 'lake',
  type: 'rest',
  uri: 'http://catalog:8181',
  warehouse: 's3://wh',
  auth: {
    type: 'oauth2',
    clientId: 'icepack',
    clientSecret: { secret: { name: 'lake-oauth', key: 'secret' } },
  },
  properties: { 'io-impl': 'org.apache.iceberg.aws.s3.S3FileIO' },
});

function thrownBy(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('nothing was thrown');
}

describe('namespace objects', () => {
  it('namespace: Icepack labels, Pod Security restricted enforced, and the installation annotation', () => {
    expect(namespaceObject(group, 'prod')).toEqual({
      metadata: {
        name: 'icepack-sales',
        labels: {
          'app.kubernetes.io/managed-by': 'icepack',
          'icepack.io/group': 'sales',
          'icepack.io/catalog': 'lake',
          'pod-security.kubernetes.io/enforce': 'restricted',
          'pod-security.kubernetes.io/enforce-version': 'latest',
          'pod-security.kubernetes.io/warn': 'restricted',
          'pod-security.kubernetes.io/warn-version': 'latest',
          'pod-security.kubernetes.io/audit': 'restricted',
          'pod-security.kubernetes.io/audit-version': 'latest',
        },
        annotations: { 'icepack.io/installation': 'prod' },
      },
    });
  });

  it('quota: the group cpu and memory, and pods for (slots + smallSlots) × (driver + max executors)', () => {
    expect(resourceQuotaObject(group).spec.hard).toEqual({
      'requests.cpu': '8',
      'requests.memory': '32Gi',
      'limits.memory': '32Gi',
      pods: '12', // (2 + the default 1) × (1 + 3)
    });
    expect(resourceQuotaObject({ ...group, smallSlots: 0 }).spec.hard.pods).toBe('8');
  });

  it('config map: the Iceberg REST catalog for Spark, the group conf, and secret references only', () => {
    const data = configMapObject(group, catalog).data;
    expect(data['spark-defaults.conf'].split('\n')).toEqual(
      expect.arrayContaining([
        'spark.sql.catalog.lake org.apache.iceberg.spark.SparkCatalog',
        'spark.sql.catalog.lake.type rest',
        'spark.sql.catalog.lake.uri http://catalog:8181',
        'spark.sql.catalog.lake.warehouse s3://wh',
        'spark.sql.catalog.lake.io-impl org.apache.iceberg.aws.s3.S3FileIO',
        'spark.sql.shuffle.partitions 64',
      ]),
    );
    expect(JSON.parse(data['catalog.json'])).toMatchObject({
      auth: { clientSecret: { secret: { name: 'lake-oauth', key: 'secret' } } },
    });
  });

  it('config map: escapes spark-defaults.conf keys and values as Properties.store, so Spark reads them back', () => {
    // Spark reads the file with java.util.Properties.load: a trailing `\` would join the next
    // line, `\` starts an escape, a key ends at `=`, `:` or a space, `#` starts a comment, and
    // a value's leading space, `=` or `:` is taken for the separator.
    const tricky = parseCatalog({
      ...catalog,
      properties: {
        trailing: 'C:\\dir\\',
        backslash: 'a\\b',
        'k=1:2 x': 'v',
        '#c!': 'v',
        lead: ' x',
        equals: '=x',
        colon: ':x',
        tab: 'a\tb',
        url: 'http://s3:9000/?a=b#f',
      },
    });
    const lines = configMapObject(group, tricky).data['spark-defaults.conf'].split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'spark.sql.catalog.lake.trailing C:\\\\dir\\\\',
        'spark.sql.catalog.lake.backslash a\\\\b',
        'spark.sql.catalog.lake.k\\=1\\:2\\ x v',
        'spark.sql.catalog.lake.\\#c\\! v',
        'spark.sql.catalog.lake.lead \\ x',
        'spark.sql.catalog.lake.equals \\=x',
        'spark.sql.catalog.lake.colon \\:x',
        'spark.sql.catalog.lake.tab a\\tb',
        'spark.sql.catalog.lake.url http://s3:9000/?a=b#f',
      ]),
    );
  });

  it('config map: refuses a line break in a spark-defaults.conf key or value, naming the key', () => {
    // A value `…\nspark.driver.extraJavaOptions …` would add a line of its own to the file.
    const lf = parseCatalog({
      ...catalog,
      properties: { 's3.endpoint': 'http://s3\nspark.driver.extraJavaOptions -Dx=1' },
    });
    const { message } = thrownBy(() => configMapObject(group, lf));
    expect(message).toContain(
      'spark-defaults.conf: the value of spark.sql.catalog.lake.s3.endpoint contains a line break',
    );
    expect(message).not.toContain('extraJavaOptions');
    const cr = parseResourceGroup({
      ...group,
      spark: { ...group.spark, sparkConf: { 'spark.sql.shuffle.partitions': '64\r' } },
    });
    expect(() => configMapObject(cr, catalog)).toThrow(
      'the value of spark.sql.shuffle.partitions contains a line break',
    );
    const key = parseCatalog({ ...catalog, properties: { 'a\rb': 'c' } });
    expect(() => configMapObject(group, key)).toThrow(
      'the key "spark.sql.catalog.lake.a\\rb" contains a line break',
    );
  });

  it('RBAC: the driver may manage pods, services, config maps and volume claims in its namespace only', () => {
    const role = roleObject(group);
    expect(role.metadata.namespace).toBe('icepack-sales');
    expect(role.rules.flatMap((rule) => rule.resources)).toEqual([
      'pods',
      'services',
      'configmaps',
      'persistentvolumeclaims',
    ]);
    expect(
      role.rules.every((rule) => rule.apiGroups.length === 1 && rule.apiGroups[0] === ''),
    ).toBe(true);
    expect(roleBindingObject(group).subjects).toEqual([
      { kind: 'ServiceAccount', name: 'icepack-spark', namespace: 'icepack-sales' },
    ]);
  });
});
