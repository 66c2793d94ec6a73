import avsc from 'avsc';
import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import { exactLongHook } from './exact-long.ts';

interface AvroField {
  name: string;
  type: unknown;
  [key: string]: unknown;
}
interface AvroRecord {
  type: 'record';
  name: string;
  fields: AvroField[];
  [key: string]: unknown;
}

/** Which fields to keep: the top record's, and those of named nested record fields. */
export interface Projection {
  readonly fields: ReadonlySet<string>;
  readonly nested?: Readonly<Record<string, Projection>>;
}

export interface CompiledReader {
  readonly reader: avsc.Type;
  readonly resolver: avsc.Resolver;
}

function isRecord(type: unknown): type is AvroRecord {
  return (
    typeof type === 'object' && type !== null && (type as { type?: unknown }).type === 'record'
  );
}

/** The record inside `type` (itself, or the non-null branch of a `["null", record]` union). */
function recordOf(type: unknown): AvroRecord | undefined {
  if (isRecord(type)) return type;
  if (Array.isArray(type)) return type.find(isRecord);
  return undefined;
}

function project(record: AvroRecord, projection: Projection): AvroRecord {
  const fields: AvroField[] = [];
  for (const field of record.fields) {
    if (!projection.fields.has(field.name)) continue;
    const nested = projection.nested?.[field.name];
    const inner = nested === undefined ? undefined : recordOf(field.type);
    if (nested === undefined || inner === undefined) {
      fields.push(field);
    } else {
      const projected = project(inner, nested);
      fields.push({
        ...field,
        type: Array.isArray(field.type)
          ? (field.type as unknown[]).map((branch) => (branch === inner ? projected : branch))
          : projected,
      });
    }
  }
  return { ...record, fields };
}

// Every manifest of a table (and spec) has the same writer schema: compile it once.
const MAX_COMPILED = 256;
const compiled = new Map<string, CompiledReader>();

/**
 * A reader for `writerSchemaText` that decodes only the projected fields; avsc's schema
 * resolution skips the others (column statistics maps are most of a manifest's bytes).
 */
export function compileProjection(
  writerSchemaText: string,
  projection: Projection,
  projectionKey: string,
  file: string,
): CompiledReader {
  const key = `${projectionKey}\u0000${writerSchemaText}`;
  const hit = compiled.get(key);
  if (hit !== undefined) return hit;
  let result: CompiledReader;
  try {
    const writerSchema = JSON.parse(writerSchemaText) as unknown;
    if (!isRecord(writerSchema)) throw new Error('the schema is not a record');
    const options = { typeHook: exactLongHook, wrapUnions: 'auto' as const };
    const writer = avsc.Type.forSchema(writerSchema as avsc.Schema, options);
    const reader = avsc.Type.forSchema(project(writerSchema, projection) as avsc.Schema, {
      typeHook: exactLongHook,
      wrapUnions: 'auto',
    });
    result = { reader, resolver: reader.createResolver(writer) };
  } catch (error) {
    throw new IcebergError(
      IcebergErrorKind.corruptFile,
      `unusable Avro schema: ${(error as Error).message}`,
      {
        file,
        cause: error,
      },
    );
  }
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  compiled.set(key, result);
  return result;
}

/** Forgets every compiled reader (benchmarks measure a cold start with it). */
export function clearCompiledReaders(): void {
  compiled.clear();
}
