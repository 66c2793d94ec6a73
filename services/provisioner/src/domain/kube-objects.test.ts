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
