import type { TableId } from '@icepack/types';

/** What went wrong, so a caller can decide what to do without parsing messages. */
export const IcebergErrorKind = {
  notFound: 'not-found',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  conflict: 'conflict',
  rateLimited: 'rate-limited',
  server: 'server',
  badRequest: 'bad-request',
  badResponse: 'bad-response',
  timeout: 'timeout',
  connection: 'connection',
  corruptFile: 'corrupt-file',
  invalidMetadata: 'invalid-metadata',
  unsupported: 'unsupported',
  io: 'io',
} as const;
export type IcebergErrorKind = (typeof IcebergErrorKind)[keyof typeof IcebergErrorKind];

/** Kinds worth another attempt: the same request may succeed later. */
const RETRYABLE: ReadonlySet<IcebergErrorKind> = new Set([
  IcebergErrorKind.rateLimited,
  IcebergErrorKind.server,
  IcebergErrorKind.timeout,
  IcebergErrorKind.connection,
]);

/** Where the error happened: the catalog call, the table, the file. */
export interface IcebergErrorContext {
  /** e.g. `GET /v1/namespaces/{ns}/tables/{table}` or `loadTable`. */
  readonly call?: string;
  readonly table?: TableId | string;
  readonly file?: string;
  readonly status?: number;
  /** Seconds the server asked us to wait (Retry-After). */
  readonly retryAfterMs?: number;
}

export interface IcebergErrorOptions extends IcebergErrorContext {
  readonly cause?: unknown;
  /** Overrides the kind's default. */
  readonly retryable?: boolean;
}

/** The one error type of this package: a kind, whether to retry, context and cause. */
export class IcebergError extends Error {
  override readonly name = 'IcebergError';
  readonly kind: IcebergErrorKind;
  readonly retryable: boolean;
  readonly context: IcebergErrorContext;

  constructor(kind: IcebergErrorKind, message: string, options: IcebergErrorOptions = {}) {
    const { cause, retryable, ...context } = options;
    super(withContext(message, context), cause === undefined ? undefined : { cause });
    this.kind = kind;
    this.retryable = retryable ?? RETRYABLE.has(kind);
    this.context = context;
  }
}

function tableText(table: TableId | string): string {
  return typeof table === 'string'
    ? table
    : [table.catalog, ...table.namespace, table.name].join('.');
}

function withContext(message: string, context: IcebergErrorContext): string {
  const parts: string[] = [];
  if (context.call !== undefined) parts.push(`call ${context.call}`);
  if (context.table !== undefined) parts.push(`table ${tableText(context.table)}`);
  if (context.file !== undefined) parts.push(`file ${context.file}`);
  return parts.length === 0 ? message : `${message} (${parts.join(', ')})`;
}

export function isIcebergError(error: unknown, kind?: IcebergErrorKind): error is IcebergError {
  return error instanceof IcebergError && (kind === undefined || error.kind === kind);
}
