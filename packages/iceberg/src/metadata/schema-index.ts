import type { IcebergNestedField, IcebergSchema, IcebergType } from '@icepack/types';

/** Field id → dotted name and primitive type text, walking structs, lists and maps. */
export function indexSchema(schema: IcebergSchema): {
  names: Map<number, string>;
  types: Map<number, string>;
} {
  const names = new Map<number, string>();
  const types = new Map<number, string>();
  const visitType = (type: IcebergType, prefix: string): void => {
    if (typeof type === 'string') return;
    switch (type.type) {
      case 'struct':
        for (const field of type.fields) visitField(field, prefix);
        return;
      case 'list':
        record(type['element-id'], `${prefix}.element`, type.element);
        return;
      case 'map':
        record(type['key-id'], `${prefix}.key`, type.key);
        record(type['value-id'], `${prefix}.value`, type.value);
        return;
    }
  };
  const record = (id: number, name: string, type: IcebergType): void => {
    names.set(id, name);
    if (typeof type === 'string') types.set(id, type);
    visitType(type, name);
  };
  const visitField = (field: IcebergNestedField, prefix: string): void => {
    record(field.id, prefix === '' ? field.name : `${prefix}.${field.name}`, field.type);
  };
  for (const field of schema.fields) {
    visitField(field, '');
  }
  return { names, types };
}
