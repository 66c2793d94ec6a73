import { describe, expect, it } from 'vitest';
import { bindingSchema, type Binding } from './binding.ts';
import { MessageType } from './message-types.ts';
import { createEnvelope, parseEnvelope } from './messages.ts';
import {
  MAX_GROUP_NAME_LENGTH,
  namespaceForGroup,
  parseResourceGroup,
  resourceGroupSchema,
  SPARK_DEFAULTS,
} from './resource-group.ts';
import { sampleBinding } from './samples.ts';
import { formatPath } from './validation-error.ts';

const base = { name: 'prod', catalog: 'prod', cpu: '8', memory: '32Gi', slots: 2 };

function firstPath(value: unknown): string | undefined {
  const result = resourceGroupSchema.safeParse(value);
  return result.success ? undefined : formatPath(result.error.issues[0]?.path ?? []);
}

describe('resourceGroupSchema', () => {
  it('applies the documented Spark defaults', () => {
    expect(resourceGroupSchema.parse(base)).toEqual({
      ...base,
      smallSlots: 1,
      spark: { ...SPARK_DEFAULTS, sparkConf: {} },
    });
  });

  it('keeps explicit settings', () => {
    const group = {
      ...base,
      smallSlots: 0,
      cpu: '16500m',
      spark: {
        image: 'ghcr.io/icepack/spark:4.0',
        driverCores: 2,
        driverMemory: '4g',
        executorCores: 4,
        executorMemory: '8g',
        maxExecutors: 8,
        sparkConf: { 'spark.sql.shuffle.partitions': '64' },
      },
    };
    expect(resourceGroupSchema.parse(group)).toEqual(group);
  });

  it('keeps the namespace name within 63 characters', () => {
    const name = 'a'.repeat(MAX_GROUP_NAME_LENGTH);
    expect(namespaceForGroup(name)).toHaveLength(63);
    expect(firstPath({ ...base, name })).toBeUndefined();
    expect(firstPath({ ...base, name: `${name}a` })).toBe('name');
  });

  it.each([
    [{ name: 'Prod' }, 'name'],
    [{ catalog: 'a.b' }, 'catalog'],
    [{ cpu: '8 cores' }, 'cpu'],
    [{ cpu: '0' }, 'cpu'],
    [{ cpu: '-8' }, 'cpu'],
    [{ memory: '1e999' }, 'memory'],
    [{ cpu: 8 }, 'cpu'],
    [{ memory: '32GB' }, 'memory'],
    [{ slots: 0 }, 'slots'],
    [{ slots: 1.5 }, 'slots'],
    [{ smallSlots: -1 }, 'smallSlots'],
    [{ smallSlots: 0.5 }, 'smallSlots'],
    [{ smallSlots: 101 }, 'smallSlots'],
    [{ smallSlots: '1' }, 'smallSlots'],
    [{ cpu: '2' }, 'cpu'], // driver 1 + executor 2 cores do not fit
    [{ memory: '4Gi' }, 'memory'], // 2g + 4g do not fit
    [{ spark: { executorMemory: '4Gi' } }, 'spark.executorMemory'],
    [
      { spark: { sparkConf: { 'spark.hadoop.fs.s3a.secret.key': 'x' } } },
      'spark.sparkConf["spark.hadoop.fs.s3a.secret.key"]',
    ],
    [{ spark: { executors: 3 } }, 'spark'],
    [{ quota: 1 }, ''],
  ])('rejects %j at %s', (patch, path) => {
    expect(firstPath({ ...base, ...patch })).toBe(path);
  });
});

describe('bindingSchema', () => {
  it('accepts a binding', () => {
    const binding = sampleBinding({ runner: 'spark-operator', state: 'draining' });
    expect(bindingSchema.parse(binding)).toEqual(binding);
  });

  it('reads a binding published before the small-task lane with the default smallSlots', () => {
    const older: Partial<Binding> = sampleBinding();
    delete older.smallSlots;
    expect(bindingSchema.parse(older).smallSlots).toBe(1);
  });

  // docs/messages.md, "Versioning": a Spark setting a newer provisioner adds must not
  // dead-letter the binding (and so unbind the catalog) on an older consumer.
  it('is read from BindingUpdated with unknown fields in spark ignored', () => {
    const binding = sampleBinding();
    const envelope = createEnvelope(MessageType.BindingUpdated, 'prod', binding);
    const parsed = parseEnvelope({
      ...envelope,
      payload: { ...envelope.payload, spark: { ...binding.spark, addedLater: 1 } },
    });
    expect(parsed.payload).toEqual(binding);
  });

  it.each([
    [{ state: 'paused' }, 'state'],
    [{ runner: 'yarn' }, 'runner'],
    [{ slots: 0 }, 'slots'],
    [{ smallSlots: -1 }, 'smallSlots'],
    [{ updatedAt: 'now' }, 'updatedAt'],
  ])('rejects %j at %s', (patch, path) => {
    expect(
      bindingSchema.safeParse({ ...sampleBinding(), ...patch }).error?.issues[0]?.path.join('.'),
    ).toBe(path);
  });
});

describe('parseResourceGroup', () => {
  it('names the field in the error message', () => {
    expect(() => parseResourceGroup({ ...base, memory: '32GB' })).toThrow(
      /^invalid resource group: memory: expected a positive Kubernetes memory quantity/,
    );
  });
});
