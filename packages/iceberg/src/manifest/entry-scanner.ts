import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import { readAvroContainer } from './avro-container.ts';
import { readExactLong, type ExactLong } from './exact-long.ts';
import { EntryStatus, FileContent, ManifestContent, type ManifestFile } from './manifest-file.ts';

/**
 * A manifest decoder written for what health needs: it walks the Avro records by the
 * writer's schema, keeps the few fields it needs in one reused `EntryView`, and skips the
 * rest (column statistics are most of a manifest's bytes) without building anything. Paths,
 * formats and partition tuples stay bytes until a caller asks for them.
 */

/** Field id of the `file_path` column of position-delete files (spec, reserved ids). */
const DELETE_FILE_PATH_FIELD_ID = 2147483546;

function corrupt(file: string, message: string): IcebergError {
  return new IcebergError(IcebergErrorKind.corruptFile, message, { file });
}

function badSchema(file: string, message: string): IcebergError {
  return new IcebergError(IcebergErrorKind.corruptFile, `unusable Avro schema: ${message}`, {
    file,
  });
}

/** A position in a decompressed block. Past the end, reads yield 0 and `pos` runs beyond `end`. */
class Cursor {
  buf: Uint8Array = new Uint8Array(0);
  pos = 0;
  end = 0;

  /** An int or a small long (|v| < 2^31 is all that is asked of counts, lengths, indexes). */
  int(): number {
    const buf = this.buf;
    let pos = this.pos;
    let b = buf[pos++] ?? 0;
    let n = b & 0x7f;
    let shift = 7;
    while (b & 0x80 && shift < 35) {
      b = buf[pos++] ?? 0;
      n |= (b & 0x7f) << shift;
      shift += 7;
    }
    this.pos = pos;
    return (n >>> 1) ^ -(n & 1);
  }

  /** A long as a number (sizes, record counts): exact up to 2^53. */
  long(): number {
    const v = readExactLong(this);
    return typeof v === 'number' ? v : Number(v);
  }

  skipVarint(): void {
    const buf = this.buf;
    let pos = this.pos;
    while ((buf[pos++] ?? 0) & 0x80);
    this.pos = pos;
  }

  /** Skips a length-prefixed string or bytes value; a negative length is corrupt. */
  skipBytes(): void {
    const n = this.int();
    if (n < 0) this.pos = this.end + 1;
    else this.pos += n;
  }
}

// --- Writer schema -> compiled plan -------------------------------------------------------

type Schema = unknown;
interface RecordSchema {
  type: 'record';
  name: string;
  fields: { name: string; type: Schema }[];
}

type Skip = (c: Cursor) => void;

/** Named types of a schema (records, enums, fixed may be referenced by name later). */
type Names = Map<string, Schema>;

function typeName(s: Schema): string | undefined {
  if (typeof s === 'string') return s;
  if (typeof s === 'object' && s !== null && !Array.isArray(s)) {
    const t = (s as { type?: unknown }).type;
    return typeof t === 'string' ? t : undefined;
  }
  return undefined;
}

function resolve(s: Schema, names: Names): Schema {
  if (typeof s === 'string' && names.has(s)) return names.get(s);
  if (typeof s === 'object' && s !== null && !Array.isArray(s)) {
    const o = s as { type?: unknown; name?: unknown; namespace?: unknown };
    if (typeof o.name === 'string' && ['record', 'enum', 'fixed'].includes(o.type as string)) {
      names.set(o.name, s);
      if (typeof o.namespace === 'string') names.set(`${o.namespace}.${o.name}`, s);
    }
    // A nested `{"type": {"type": "record", …}}` or `{"type": "long", "logicalType": …}`.
    if (typeof o.type === 'object' && o.type !== null) return resolve(o.type, names);
  }
  return s;
}

function isRecord(s: Schema): s is RecordSchema {
  return typeName(s) === 'record' && Array.isArray((s as RecordSchema).fields);
}

const skipNothing: Skip = () => {};
const skipVarint: Skip = (c) => c.skipVarint();
const skipBytes: Skip = (c) => c.skipBytes();

/** Item shapes walked inline: a record of varints and bytes (Iceberg's int→long/bytes maps). */
const Op = { varint: 0, bytes: 1 } as const;

function flatOps(s: Schema, names: Names): number[] | undefined {
  if (!isRecord(s)) return undefined;
  const ops: number[] = [];
  for (const f of s.fields) {
    const t = typeName(resolve(f.type, names));
    if (t === 'int' || t === 'long') ops.push(Op.varint);
    else if (t === 'bytes' || t === 'string') ops.push(Op.bytes);
    else return undefined;
  }
  return ops;
}

/**
 * Walks array or map blocks. A negative count carries the block's byte size: jumped over.
 * Iceberg Java writes positive counts without sizes, so the items are walked.
 */
function blocksSkipper(item: Skip, ops: number[] | undefined, file: string): Skip {
  // Items made of varints only ({int key, long value}: column sizes, value/null/NaN counts)
  // are walked as a run of varints.
  const varints = ops?.every((o) => o === Op.varint) === true ? ops.length : 0;
  const pair = ops?.length === 2 && ops[0] === Op.varint && ops[1] === Op.bytes ? 1 : 0;
  return (c) => {
    for (;;) {
      let count = c.int();
      if (count === 0) return;
      if (count < 0) {
        const size = c.long();
        if (size < 0) throw corrupt(file, 'corrupt Avro file: negative block size');
        c.pos += size;
      } else if (varints > 0) {
        const buf = c.buf;
        const end = c.end;
        let pos = c.pos;
        for (let n = count * varints; n > 0 && pos <= end; n--) while ((buf[pos++] ?? 0) & 0x80);
        c.pos = pos;
      } else if (pair === 1) {
        // {int key, bytes value}: lower and upper bounds.
        const buf = c.buf;
        const end = c.end;
        let pos = c.pos;
        for (; count > 0 && pos <= end; count--) {
          while ((buf[pos++] ?? 0) & 0x80);
          let b = buf[pos++] ?? 0;
          let n = b & 0x7f;
          for (let shift = 7; b & 0x80 && shift < 35; shift += 7) {
            b = buf[pos++] ?? 0;
            n |= (b & 0x7f) << shift;
          }
          n = (n >>> 1) ^ -(n & 1);
          pos = n < 0 ? end + 1 : pos + n;
        }
        c.pos = pos;
      } else {
        for (; count > 0 && c.pos <= c.end; count--) item(c);
      }
      if (c.pos > c.end) return;
    }
  };
}

/** A skipper for any writer type. */
function skipperOf(s0: Schema, names: Names, file: string, where: string): Skip {
  const s = resolve(s0, names);
  if (Array.isArray(s)) {
    const branches = s.map((b) => skipperOf(b, names, file, where));
    return (c) => {
      const i = c.int();
      const branch = branches[i];
      if (branch === undefined) {
        c.pos = c.end + 1;
        return;
      }
      branch(c);
    };
  }
  switch (typeName(s) ?? '') {
    case 'null':
      return skipNothing;
    case 'boolean':
      return (c) => {
        c.pos += 1;
      };
    case 'int':
    case 'long':
    case 'enum':
      return skipVarint;
    case 'float':
      return (c) => {
        c.pos += 4;
      };
    case 'double':
      return (c) => {
        c.pos += 8;
      };
    case 'bytes':
    case 'string':
      return skipBytes;
    case 'fixed': {
      const size = (s as { size?: unknown }).size;
      if (typeof size !== 'number') throw badSchema(file, `fixed without a size at ${where}`);
      return (c) => {
        c.pos += size;
      };
    }
    case 'array': {
      const items = (s as { items?: Schema }).items;
      return blocksSkipper(
        skipperOf(items, names, file, `${where}[]`),
        flatOps(resolve(items, names), names),
        file,
      );
    }
    case 'map': {
      const values = skipperOf((s as { values?: Schema }).values, names, file, `${where}{}`);
      return blocksSkipper(
        (c) => {
          c.skipBytes();
          values(c);
        },
        undefined,
        file,
      );
    }
    case 'record': {
      if (!isRecord(s)) throw badSchema(file, `record without fields at ${where}`);
      const fields = s.fields.map((f) => skipperOf(f.type, names, file, `${where}.${f.name}`));
      return (c) => {
        for (let i = 0; i < fields.length; i++) fields[i]!(c);
      };
    }
    default:
      throw badSchema(file, `unknown type ${JSON.stringify(s)} at ${where}`);
  }
}

/** A kept field: its value type, and which union branch is null (-1: not a union). */
interface Kept {
  readonly nullBranch: number;
  readonly valueBranch: number;
  readonly type: string;
  readonly schema: Schema;
}

function kept(s0: Schema, names: Names, file: string, where: string, types: string[]): Kept {
  const s = resolve(s0, names);
  if (Array.isArray(s)) {
    if (s.length === 2) {
      const n = s.findIndex((b) => typeName(resolve(b, names)) === 'null');
      const v = 1 - n;
      const value = resolve(s[v], names);
      const t = typeName(value);
      if (n >= 0 && t !== undefined && types.includes(t))
        return { nullBranch: n, valueBranch: v, type: t, schema: value };
    }
  } else {
    const t = typeName(s);
    if (t !== undefined && types.includes(t))
      return { nullBranch: -1, valueBranch: -1, type: t, schema: s };
  }
  throw badSchema(file, `${where} has type ${JSON.stringify(s0)}, expected ${types.join(' or ')}`);
}

/** Decoders of a partition tuple's values, in the writer's field order. */
type ValueReader = (c: Cursor) => unknown;

function valueReader(s0: Schema, names: Names, file: string, where: string): ValueReader {
  const s = resolve(s0, names);
  if (Array.isArray(s)) {
    const branches = s.map((b) => valueReader(b, names, file, where));
    return (c) => {
      const branch = branches[c.int()];
      if (branch === undefined) {
        c.pos = c.end + 1;
        return null;
      }
      return branch(c);
    };
  }
  const view = (c: Cursor, n: number): DataView =>
    new DataView(c.buf.buffer, c.buf.byteOffset + c.pos, Math.min(n, Math.max(0, c.end - c.pos)));
  switch (typeName(s) ?? '') {
    case 'null':
      return () => null;
    case 'boolean':
      return (c) => (c.buf[c.pos++] ?? 0) !== 0;
    case 'int':
      return (c) => c.int();
    case 'long':
      return (c) => readExactLong(c);
    case 'float':
      return (c) => {
        const v = c.pos + 4 <= c.end ? view(c, 4).getFloat32(0, true) : 0;
        c.pos += 4;
        return v;
      };
    case 'double':
      return (c) => {
        const v = c.pos + 8 <= c.end ? view(c, 8).getFloat64(0, true) : 0;
        c.pos += 8;
        return v;
      };
    case 'string':
      return (c) => {
        const n = c.int();
        const start = c.pos;
        c.pos = n < 0 ? c.end + 1 : start + n;
        return utf8(c.buf, start, Math.min(c.pos, c.end));
      };
    case 'bytes':
      return (c) => {
        const n = c.int();
        const start = c.pos;
        c.pos = n < 0 ? c.end + 1 : start + n;
        return Buffer.from(c.buf.subarray(start, Math.min(c.pos, c.end)));
      };
    case 'fixed': {
      const size = (s as { size?: unknown }).size;
      if (typeof size !== 'number') throw badSchema(file, `fixed without a size at ${where}`);
      return (c) => {
        const start = c.pos;
        c.pos += size;
        return Buffer.from(c.buf.subarray(start, Math.min(c.pos, c.end)));
      };
    }
    case 'enum': {
      const symbols = (s as { symbols?: unknown }).symbols;
      return (c) => (Array.isArray(symbols) ? (symbols[c.int()] as unknown) : c.int()) ?? null;
    }
    default:
      throw badSchema(file, `partition field ${where} has type ${JSON.stringify(s0)}`);
  }
}

function utf8(buf: Uint8Array, start: number, end: number): string {
  return (buf as Buffer).toString('utf8', start, end);
}

// Steps of the entry and data_file records, in the writer's field order.
const E = { skip: 0, status: 1, snapshotId: 2, sequence: 3, fileSequence: 4, dataFile: 5 } as const;
const D = {
  skip: 0,
  content: 1,
  filePath: 2,
  fileFormat: 3,
  partition: 4,
  recordCount: 5,
  fileSize: 6,
  referencedDataFile: 7,
  contentOffset: 8,
  contentSize: 9,
  lowerBounds: 10,
  upperBounds: 11,
} as const;

interface Step {
  readonly op: number;
  readonly skip: Skip;
  readonly kept?: Kept;
}

interface Plan {
  readonly entry: readonly Step[];
  readonly dataFile: readonly Step[];
  readonly partitionNames: readonly string[];
  readonly partitionValues: readonly ValueReader[];
  readonly hasSequence: boolean;
  readonly hasFileSequence: boolean;
}

const ENTRY_OPS: Record<string, number> = {
  status: E.status,
  snapshot_id: E.snapshotId,
  sequence_number: E.sequence,
  file_sequence_number: E.fileSequence,
  data_file: E.dataFile,
};
const DATA_FILE_OPS: Record<string, [number, string[]]> = {
  content: [D.content, ['int']],
  file_path: [D.filePath, ['string']],
  file_format: [D.fileFormat, ['string']],
  partition: [D.partition, ['record']],
  record_count: [D.recordCount, ['long', 'int']],
  file_size_in_bytes: [D.fileSize, ['long', 'int']],
  referenced_data_file: [D.referencedDataFile, ['string']],
  content_offset: [D.contentOffset, ['long', 'int']],
  content_size_in_bytes: [D.contentSize, ['long', 'int']],
  lower_bounds: [D.lowerBounds, ['array']],
  upper_bounds: [D.upperBounds, ['array']],
};

function compilePlan(schemaText: string, file: string): Plan {
  let root: Schema;
  try {
    root = JSON.parse(schemaText) as Schema;
  } catch (error) {
    throw badSchema(file, (error as Error).message);
  }
  const names: Names = new Map();
  root = resolve(root, names);
  if (!isRecord(root)) throw badSchema(file, 'the schema is not a record');
  const entry: Step[] = [];
  let dataFile: Step[] | undefined;
  let partitionNames: string[] = [];
  let partitionValues: ValueReader[] = [];
  const fieldNames = new Set(root.fields.map((f) => f.name));
  for (const field of root.fields) {
    const skip = skipperOf(field.type, names, file, field.name);
    const op = ENTRY_OPS[field.name] ?? E.skip;
    if (op === E.skip) {
      entry.push({ op, skip });
    } else if (op === E.dataFile) {
      const df = resolve(field.type, names);
      if (!isRecord(df)) throw badSchema(file, 'data_file is not a record');
      dataFile = [];
      for (const f of df.fields) {
        const fskip = skipperOf(f.type, names, file, `data_file.${f.name}`);
        const known = DATA_FILE_OPS[f.name];
        if (known === undefined) {
          dataFile.push({ op: D.skip, skip: fskip });
          continue;
        }
        const k = kept(f.type, names, file, `data_file.${f.name}`, known[1]);
        if (known[0] === D.partition) {
          const p = k.schema as RecordSchema;
          partitionNames = p.fields.map((pf) => pf.name);
          partitionValues = p.fields.map((pf) =>
            valueReader(pf.type, names, file, `data_file.partition.${pf.name}`),
          );
        }
        if (known[0] === D.lowerBounds || known[0] === D.upperBounds) {
          const items = resolve((k.schema as { items?: Schema }).items, names);
          const ops = flatOps(items, names);
          if (ops?.length !== 2 || ops[0] !== Op.varint || ops[1] !== Op.bytes)
            throw badSchema(
              file,
              `data_file.${f.name} is not an array of {key: int, value: bytes}`,
            );
        }
        dataFile.push({ op: known[0], skip: fskip, kept: k });
      }
    } else {
      const types = op === E.status ? ['int'] : ['long', 'int'];
      entry.push({ op, skip, kept: kept(field.type, names, file, field.name, types) });
      continue;
    }
    if (op === E.dataFile) entry.push({ op, skip });
  }
  if (dataFile === undefined) throw badSchema(file, 'no data_file field');
  if (!fieldNames.has('status')) throw badSchema(file, 'no status field');
  return {
    entry,
    dataFile,
    partitionNames,
    partitionValues,
    hasSequence: fieldNames.has('sequence_number'),
    hasFileSequence: fieldNames.has('file_sequence_number'),
  };
}

const MAX_PLANS = 256;
const plans = new Map<string, Plan>();

function planFor(schemaText: string, file: string): Plan {
  let plan = plans.get(schemaText);
  if (plan === undefined) {
    plan = compilePlan(schemaText, file);
    if (plans.size >= MAX_PLANS) plans.delete(plans.keys().next().value!);
    plans.set(schemaText, plan);
  }
  return plan;
}

/** Forgets every compiled plan (benchmarks measure a cold start with it). */
export function clearEntryPlans(): void {
  plans.clear();
}

// --- The entry view ------------------------------------------------------------------------

/**
 * One manifest entry while `scanManifest` calls its visitor: the same object for every entry,
 * valid only during the call. Snapshot id and sequence numbers are inherited already.
 */
export class EntryView {
  status: EntryStatus = EntryStatus.added;
  content: FileContent = FileContent.data;
  recordCount = 0;
  fileSizeInBytes = 0;
  /** Exact decimal string. */
  snapshotId = '';
  /** Data sequence number: a number when it is a safe integer, else its decimal string. */
  sequenceNumber: ExactLong = 0;
  fileSequenceNumber: ExactLong = 0;
  contentOffset: number | null = null;
  contentSizeInBytes: number | null = null;

  /** The block being read, and where this entry's byte fields are in it. */
  buf: Uint8Array = new Uint8Array(0);
  pathStart = 0;
  pathEnd = 0;
  formatStart = 0;
  formatEnd = 0;
  partitionStart = 0;
  partitionEnd = 0;
  /** `referenced_data_file` (start -1: null or absent). */
  refStart = -1;
  refEnd = -1;
  /** The `file_path` bounds of a position-delete file (start -1: none). */
  lowerStart = -1;
  lowerEnd = -1;
  upperStart = -1;
  upperEnd = -1;

  #plan: Plan | undefined;
  #cursor = new Cursor();
  #format = '';
  #formatBytes: Uint8Array = new Uint8Array(0);

  /** @internal */
  bind(plan: Plan, buf: Uint8Array): void {
    this.#plan = plan;
    this.buf = buf;
  }

  filePath(): string {
    return utf8(this.buf, this.pathStart, this.pathEnd);
  }

  /** `PARQUET`, `AVRO`, `ORC`, `PUFFIN` as written (one string per distinct format). */
  fileFormat(): string {
    const buf = this.buf;
    const start = this.formatStart;
    const n = this.formatEnd - start;
    const last = this.#formatBytes;
    let same = last.length === n;
    for (let i = 0; same && i < n; i++) same = last[i] === buf[start + i];
    if (!same) {
      this.#formatBytes = buf.slice(start, this.formatEnd);
      this.#format = utf8(buf, start, this.formatEnd);
    }
    return this.#format;
  }

  isDeletionVector(): boolean {
    return (
      this.content === FileContent.positionDeletes && this.fileFormat().toUpperCase() === 'PUFFIN'
    );
  }

  /**
   * The data file a position-delete file or DV applies to: `referenced_data_file`, or the
   * `file_path` column's bounds when they are equal (Iceberg's ContentFileUtil.referencedDataFile,
   * v2 writers). Returns [start, end) in `buf`, or null.
   */
  referencedRange(): readonly [number, number] | null {
    if (this.refStart >= 0) return [this.refStart, this.refEnd];
    if (this.content !== FileContent.positionDeletes) return null;
    if (this.lowerStart < 0 || this.upperStart < 0) return null;
    const n = this.lowerEnd - this.lowerStart;
    if (n !== this.upperEnd - this.upperStart) return null;
    const buf = this.buf;
    for (let i = 0; i < n; i++)
      if (buf[this.lowerStart + i] !== buf[this.upperStart + i]) return null;
    return [this.lowerStart, this.lowerEnd];
  }

  referencedDataFile(): string | null {
    const r = this.referencedRange();
    return r === null ? null : utf8(this.buf, r[0], r[1]);
  }

  /** The partition tuple, field name → value as Avro decodes it (exact longs, Buffers …). */
  partition(): Record<string, unknown> {
    const plan = this.#plan!;
    const c = this.#cursor;
    c.buf = this.buf;
    c.pos = this.partitionStart;
    c.end = this.partitionEnd;
    const out: Record<string, unknown> = {};
    for (let i = 0; i < plan.partitionNames.length; i++)
      out[plan.partitionNames[i]!] = plan.partitionValues[i]!(c);
    return out;
  }
}

// --- Scanning -----------------------------------------------------------------------------

export interface ScanManifestResult {
  /** Entries decoded (live and deleted). */
  readonly entries: number;
}

/** Recently decoded snapshot ids as strings: few distinct ones, repeated per entry. */
const idText = new Map<ExactLong, string>();
function snapshotIdText(v: ExactLong): string {
  if (typeof v === 'string') return v;
  let s = idText.get(v);
  if (s === undefined) {
    if (idText.size >= 64) idText.clear();
    s = String(v);
    idText.set(v, s);
  }
  return s;
}

function exactOf(text: string): ExactLong {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

/**
 * Decodes a manifest (v1/v2/v3) and calls `visit` for every entry, live or deleted, with one
 * reused `EntryView`. Snapshot id and sequence numbers are inherited from `manifest` (its
 * manifest-list entry) as the spec says: null values are inherited for ADDED entries; v1
 * manifests (no sequence numbers) take the list's. Damage is a `corrupt-file` error naming
 * the file; fields the reader does not know are skipped.
 */
export function scanManifest(
  bytes: Uint8Array,
  manifest: ManifestFile,
  visit: (entry: EntryView) => void,
): ScanManifestResult {
  const file = manifest.path;
  const container = readAvroContainer(bytes, file);
  const plan = planFor(container.schemaText, file);
  const inheritedSnapshot = manifest.addedSnapshotId;
  const inheritedSequence = exactOf(manifest.sequenceNumber);
  const deletes = manifest.content === ManifestContent.deletes;
  const view = new EntryView();
  const c = new Cursor();
  let entries = 0;
  for (const block of container.blocks) {
    const buf = block.data;
    c.buf = buf;
    c.pos = 0;
    c.end = buf.length;
    view.bind(plan, buf);
    for (let i = 0; i < block.count; i++) {
      readEntry(c, plan, view, deletes, file, i);
      if (c.pos > c.end) throw corrupt(file, `corrupt Avro file: truncated record ${i} of a block`);
      if (view.status !== EntryStatus.added && view.status !== EntryStatus.existing) {
        if (view.status !== EntryStatus.deleted)
          throw corrupt(file, `unknown entry status ${String(view.status)}`);
      }
      const added = view.status === EntryStatus.added;
      if (!view.snapshotId) view.snapshotId = inheritedSnapshot;
      if (!plan.hasSequence) view.sequenceNumber = inheritedSequence;
      else if (seqNull) {
        if (!added) throw corrupt(file, 'sequence_number is null for an entry that is not ADDED');
        view.sequenceNumber = inheritedSequence;
      }
      if (!plan.hasFileSequence) view.fileSequenceNumber = inheritedSequence;
      else if (fileSeqNull) {
        if (!added)
          throw corrupt(file, 'file_sequence_number is null for an entry that is not ADDED');
        view.fileSequenceNumber = inheritedSequence;
      }
      entries++;
      visit(view);
    }
  }
  return { entries };
}

// Set by readEntry: whether the sequence numbers were null (the view keeps their values).
let seqNull = false;
let fileSeqNull = false;

/** Reads a kept field's union branch: true when the value is null. */
function isNull(c: Cursor, k: Kept, file: string): boolean {
  if (k.nullBranch < 0) return false;
  const branch = c.int();
  if (branch === k.nullBranch) return true;
  if (branch !== k.valueBranch) throw corrupt(file, `corrupt Avro file: union branch ${branch}`);
  return false;
}

function readEntry(
  c: Cursor,
  plan: Plan,
  view: EntryView,
  deletes: boolean,
  file: string,
  index: number,
): void {
  view.status = -1 as EntryStatus;
  view.snapshotId = '';
  seqNull = true;
  fileSeqNull = true;
  const steps = plan.entry;
  for (let s = 0; s < steps.length; s++) {
    const step = steps[s]!;
    switch (step.op) {
      case E.skip:
        step.skip(c);
        break;
      case E.status:
        view.status = c.int() as EntryStatus;
        break;
      case E.snapshotId:
        if (!isNull(c, step.kept!, file)) view.snapshotId = snapshotIdText(readExactLong(c));
        break;
      case E.sequence:
        if (!isNull(c, step.kept!, file)) {
          view.sequenceNumber = readExactLong(c);
          seqNull = false;
        }
        break;
      case E.fileSequence:
        if (!isNull(c, step.kept!, file)) {
          view.fileSequenceNumber = readExactLong(c);
          fileSeqNull = false;
        }
        break;
      case E.dataFile:
        readDataFile(c, plan, view, deletes, file);
        break;
    }
    if (c.pos > c.end)
      throw corrupt(file, `corrupt Avro file: truncated record ${index} of a block`);
  }
}

function readDataFile(
  c: Cursor,
  plan: Plan,
  view: EntryView,
  deletes: boolean,
  file: string,
): void {
  view.content = FileContent.data;
  view.refStart = -1;
  view.lowerStart = -1;
  view.upperStart = -1;
  view.contentOffset = null;
  view.contentSizeInBytes = null;
  const steps = plan.dataFile;
  for (let s = 0; s < steps.length; s++) {
    const step = steps[s]!;
    switch (step.op) {
      case D.skip:
        step.skip(c);
        break;
      case D.content: {
        const content = c.int();
        if (
          content !== FileContent.data &&
          content !== FileContent.positionDeletes &&
          content !== FileContent.equalityDeletes
        ) {
          throw corrupt(file, `unknown file content ${content}`);
        }
        view.content = content;
        break;
      }
      case D.filePath: {
        const n = c.int();
        view.pathStart = c.pos;
        c.pos = n < 0 ? c.end + 1 : c.pos + n;
        view.pathEnd = c.pos;
        break;
      }
      case D.fileFormat: {
        const n = c.int();
        view.formatStart = c.pos;
        c.pos = n < 0 ? c.end + 1 : c.pos + n;
        view.formatEnd = c.pos;
        break;
      }
      case D.partition:
        view.partitionStart = c.pos;
        step.skip(c);
        view.partitionEnd = c.pos;
        break;
      case D.recordCount:
        view.recordCount = c.long();
        break;
      case D.fileSize:
        view.fileSizeInBytes = c.long();
        break;
      case D.referencedDataFile:
        if (!isNull(c, step.kept!, file)) {
          const n = c.int();
          view.refStart = c.pos;
          c.pos = n < 0 ? c.end + 1 : c.pos + n;
          view.refEnd = c.pos;
        }
        break;
      case D.contentOffset:
        if (!isNull(c, step.kept!, file)) view.contentOffset = c.long();
        break;
      case D.contentSize:
        if (!isNull(c, step.kept!, file)) view.contentSizeInBytes = c.long();
        break;
      case D.lowerBounds:
      case D.upperBounds:
        // Only position-delete files need the `file_path` bounds; data manifests skip them.
        if (!deletes) step.skip(c);
        else if (!isNull(c, step.kept!, file)) findPathBound(c, view, step.op === D.lowerBounds);
        break;
    }
  }
}

/** Walks a bounds array ({key: int, value: bytes} items) and notes the `file_path` bound. */
function findPathBound(c: Cursor, view: EntryView, lower: boolean): void {
  for (;;) {
    let count = c.int();
    if (count === 0) return;
    if (count < 0) {
      count = -count;
      c.long(); // the block's byte size: the items are read anyway
    }
    for (; count > 0 && c.pos <= c.end; count--) {
      const key = c.int();
      const n = c.int();
      const start = c.pos;
      c.pos = n < 0 ? c.end + 1 : start + n;
      if (key === DELETE_FILE_PATH_FIELD_ID) {
        if (lower) {
          view.lowerStart = start;
          view.lowerEnd = c.pos;
        } else {
          view.upperStart = start;
          view.upperEnd = c.pos;
        }
      }
    }
    if (c.pos > c.end) return;
  }
}
