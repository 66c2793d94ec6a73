import { z } from 'zod';

/** v3 multi-argument transforms write `source-ids`; others write `source-id`. */
function hasSource(field: {
  'source-id'?: number | undefined;
  'source-ids'?: number[] | undefined;
}): boolean {
  return field['source-id'] !== undefined || field['source-ids'] !== undefined;
}
const sourceMessage = { error: 'expected "source-id" (or v3 "source-ids")', path: ['source-id'] };

export const partitionFieldSchema = z
  .looseObject({
    'source-id': z.int().min(0).optional(),
    'source-ids': z.array(z.int().min(0)).min(1).optional(),
    /** Absent in old v1 metadata (ids then start at 1000 in order). */
    'field-id': z.int().min(0).optional(),
    name: z.string().min(1),
    transform: z.string().min(1),
  })
  .refine(hasSource, sourceMessage);
export type IcebergPartitionField = z.output<typeof partitionFieldSchema>;

export const partitionSpecSchema = z.looseObject({
  'spec-id': z.int().min(0),
  fields: z.array(partitionFieldSchema),
});
export type IcebergPartitionSpec = z.output<typeof partitionSpecSchema>;

export const sortFieldSchema = z
  .looseObject({
    transform: z.string().min(1),
    'source-id': z.int().min(0).optional(),
    'source-ids': z.array(z.int().min(0)).min(1).optional(),
    direction: z.enum(['asc', 'desc']),
    'null-order': z.enum(['nulls-first', 'nulls-last']),
  })
  .refine(hasSource, sourceMessage);
export type IcebergSortField = z.output<typeof sortFieldSchema>;

export const sortOrderSchema = z.looseObject({
  'order-id': z.int().min(0),
  fields: z.array(sortFieldSchema),
});
export type IcebergSortOrder = z.output<typeof sortOrderSchema>;
