import { z } from 'zod';
import { isRecord, parseNested } from './forward-issues.ts';

/**
 * Iceberg schema types as the spec's JSON writes them. Primitive type names are accepted
 * leniently (any non-empty string: `long`, `decimal(9,2)`, `fixed[16]`, v3 `variant`,
 * `unknown`, `timestamp_ns`, `geometry(srid:4326)` …); struct, list and map are checked.
 */
export type IcebergType = string | IcebergStructType | IcebergListType | IcebergMapType;

export interface IcebergNestedField {
  id: number;
  name: string;
  required: boolean;
  type: IcebergType;
  doc?: string | undefined;
  /** v3 default values: JSON single-value serialisation, kept as written. */
  'initial-default'?: unknown;
  'write-default'?: unknown;
  [key: string]: unknown;
}

export interface IcebergStructType {
  type: 'struct';
  fields: IcebergNestedField[];
  [key: string]: unknown;
}

export interface IcebergListType {
  type: 'list';
  'element-id': number;
  'element-required': boolean;
  element: IcebergType;
  [key: string]: unknown;
}

export interface IcebergMapType {
  type: 'map';
  'key-id': number;
  key: IcebergType;
  'value-id': number;
  'value-required': boolean;
  value: IcebergType;
  [key: string]: unknown;
}

const fieldId = z.int().min(0);

export const icebergTypeSchema: z.ZodType<IcebergType> = z
  .unknown()
  .transform((value, ctx): IcebergType => {
    if (typeof value === 'string') {
      if (value !== '') return value;
    } else if (isRecord(value)) {
      switch (value.type) {
        case 'struct':
          return parseNested(structTypeSchema, value, ctx);
        case 'list':
          return parseNested(listTypeSchema, value, ctx);
        case 'map':
          return parseNested(mapTypeSchema, value, ctx);
        default:
          ctx.addIssue({
            code: 'custom',
            path: ['type'],
            message: 'expected "struct", "list" or "map"',
          });
          return z.NEVER;
      }
    }
    ctx.addIssue({
      code: 'custom',
      message: 'expected a primitive type name or a struct, list or map object',
    });
    return z.NEVER;
  });

export const nestedFieldSchema: z.ZodType<IcebergNestedField> = z.looseObject({
  id: fieldId,
  name: z.string().min(1),
  required: z.boolean(),
  get type() {
    return icebergTypeSchema;
  },
  doc: z.string().optional(),
});

export const structTypeSchema: z.ZodType<IcebergStructType> = z.looseObject({
  type: z.literal('struct'),
  get fields() {
    return z.array(nestedFieldSchema);
  },
});

export const listTypeSchema: z.ZodType<IcebergListType> = z.looseObject({
  type: z.literal('list'),
  'element-id': fieldId,
  'element-required': z.boolean(),
  get element() {
    return icebergTypeSchema;
  },
});

export const mapTypeSchema: z.ZodType<IcebergMapType> = z.looseObject({
  type: z.literal('map'),
  'key-id': fieldId,
  get key() {
    return icebergTypeSchema;
  },
  'value-id': fieldId,
  'value-required': z.boolean(),
  get value() {
    return icebergTypeSchema;
  },
});

/** A table schema: a struct with an id (absent in some v1 metadata) and identifier fields. */
export const icebergSchemaSchema = z.looseObject({
  type: z.literal('struct'),
  'schema-id': z.int().min(0).optional(),
  'identifier-field-ids': z.array(fieldId).optional(),
  fields: z.array(nestedFieldSchema),
});
export type IcebergSchema = z.output<typeof icebergSchemaSchema>;
