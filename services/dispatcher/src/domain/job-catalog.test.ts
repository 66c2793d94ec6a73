import { SPARK_REDACTION_REGEX } from '@icepack/types';
import { describe, expect, it } from 'vitest';
import { jobSparkConf } from './job-catalog.ts';

describe('jobSparkConf', () => {
  const catalog = {
    name: 'lake',
    uri: 'http://catalog:8181',
    warehouse: 's3://bucket/wh',
    auth: {
      type: 'oauth2' as const,
      clientId: 'icepack',
      clientSecret: { env: 'ICEPACK_SECRET_LAKE' },
      scope: 'catalog',
    },
    properties: {
      's3.endpoint': 'http://s3:9000',
      's3.path-style-access': 'true',
      'client.region': 'eu-west-1',
    },
  };

  it('gives the job its catalog with every property, the OAuth2 scope and refresh, and no credential', () => {
    const conf = jobSparkConf(catalog, {});
    expect(conf).toEqual({
      'spark.sql.catalog.lake': 'org.apache.iceberg.spark.SparkCatalog',
      'spark.sql.catalog.lake.type': 'rest',
      'spark.sql.catalog.lake.uri': 'http://catalog:8181',
      'spark.sql.catalog.lake.warehouse': 's3://bucket/wh',
      'spark.sql.catalog.lake.header.X-Iceberg-Access-Delegation': 'vended-credentials',
      'spark.sql.catalog.lake.scope': 'catalog',
      // Refreshed by a new client-credentials token (ADR 0037).
      'spark.sql.catalog.lake.token-refresh-enabled': 'true',
      'spark.sql.catalog.lake.token-exchange-enabled': 'false',
      'spark.sql.catalog.lake.s3.endpoint': 'http://s3:9000',
      'spark.sql.catalog.lake.s3.path-style-access': 'true',
      'spark.sql.catalog.lake.client.region': 'eu-west-1',
      'spark.redaction.regex': SPARK_REDACTION_REGEX,
    });
    expect(JSON.stringify(conf)).not.toContain('ICEPACK_SECRET_LAKE');
  });

  it("lets the group's conf add and override settings, but never the redaction regex", () => {
    const conf = jobSparkConf(catalog, {
      'spark.sql.catalog.lake.s3.endpoint': 'http://other:9000',
      'spark.redaction.regex': 'nothing',
      'spark.executor.memory': '2g',
    });
    expect(conf['spark.sql.catalog.lake.s3.endpoint']).toBe('http://other:9000');
    expect(conf['spark.executor.memory']).toBe('2g');
    expect(conf['spark.redaction.regex']).toBe(SPARK_REDACTION_REGEX);
  });

  it('redacts what the job sets and the S3 keys of the AWS chain', () => {
    const redacted = new RegExp(SPARK_REDACTION_REGEX.replace('(?i)', ''), 'i');
    for (const key of [
      'spark.sql.catalog.lake.credential',
      'spark.sql.catalog.lake.token',
      'spark.sql.catalog.lake.s3.secret-access-key',
      'spark.sql.catalog.lake.s3.session-token',
      'ICEPACK_CATALOG_CREDENTIAL',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
    ])
      expect(key).toMatch(redacted);
  });
});
