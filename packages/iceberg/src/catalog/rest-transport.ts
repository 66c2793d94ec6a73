import type { TableId } from '@icepack/types';
import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';
import { readBoundedText } from './bounded-body.ts';
import { parseRetryAfter, retryDelayMs, type ResolvedRetry } from './retry-policy.ts';

export interface RestRequest {
  readonly method: 'GET' | 'HEAD' | 'POST';
  /** Path below the catalog URI, already encoded, e.g. `/v1/namespaces`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | undefined>>;
  readonly headers?: Readonly<Record<string, string>>;
  /** Names the call in errors and logs, e.g. `loadTable`. */
  readonly call: string;
  readonly table?: TableId;
  /** Statuses returned to the caller rather than thrown (e.g. 304). 2xx always are. */
  readonly accept?: readonly number[];
  readonly signal?: AbortSignal;
}

export interface RestResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export interface TransportOptions {
  readonly uri: string;
  readonly timeoutMs: number;
  /** Largest response body read; a larger one is a `bad-response` error. */
  readonly maxResponseBytes: number;
  readonly retry: ResolvedRetry;
  readonly headers: Readonly<Record<string, string>>;
  /** Authorization header value (or undefined); `refresh` after a 401 to try a new token once. */
  readonly authorization: (signal?: AbortSignal) => Promise<string | undefined>;
  readonly onUnauthorized?: () => boolean;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly random?: () => number;
}

function kindForStatus(status: number): IcebergErrorKind {
  switch (status) {
    case 400:
      return IcebergErrorKind.badRequest;
    case 401:
    case 419: // Iceberg REST: credentials timed out
      return IcebergErrorKind.unauthorized;
    case 403:
      return IcebergErrorKind.forbidden;
    case 404:
      return IcebergErrorKind.notFound;
    case 409:
      return IcebergErrorKind.conflict;
    case 429:
      return IcebergErrorKind.rateLimited;
    default:
      return status >= 500 ? IcebergErrorKind.server : IcebergErrorKind.badResponse;
  }
}

/** The message of the REST spec's `ErrorModel` body, when there is one. */
function errorMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; type?: unknown } };
    const message = body.error?.message;
    const type = body.error?.type;
    if (typeof message === 'string')
      return typeof type === 'string' ? `${type}: ${message}` : message;
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return text === '' ? undefined : text.slice(0, 200);
}

/** One HTTP exchange with the catalog: timeout per attempt, retries with backoff, typed errors. */
export class RestTransport {
  readonly #options: TransportOptions;
  constructor(options: TransportOptions) {
    this.#options = options;
  }

  get uri(): string {
    return this.#options.uri;
  }

  async request(request: RestRequest): Promise<RestResponse> {
    const { retry } = this.#options;
    let refreshedAuth = false;
    for (let attempt = 1; ; attempt++) {
      let error: IcebergError;
      try {
        const response = await this.#once(request);
        if (
          (response.status >= 200 && response.status < 300) ||
          request.accept?.includes(response.status)
        ) {
          return response;
        }
        error = this.#statusError(request, response);
        if (
          error.kind === IcebergErrorKind.unauthorized &&
          !refreshedAuth &&
          this.#options.onUnauthorized?.() === true
        ) {
          // A rejected token may simply have expired early: one more try with a fresh one.
          refreshedAuth = true;
          attempt--;
          continue;
        }
      } catch (caught) {
        if (!(caught instanceof IcebergError)) throw caught;
        error = caught;
      }
      if (!error.retryable || attempt >= retry.maxAttempts || request.signal?.aborted === true)
        throw error;
      await this.#options.sleep(
        retryDelayMs(retry, attempt, error.context.retryAfterMs, this.#options.random),
        request.signal,
      );
    }
  }

  #statusError(request: RestRequest, response: RestResponse): IcebergError {
    const kind = kindForStatus(response.status);
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    // Redirects are not followed (see #once): say so rather than echo the body.
    const detail =
      response.status >= 300 && response.status < 400 && response.headers.has('location')
        ? 'redirect not followed (a catalog must answer at its own URI)'
        : errorMessage(response.text);
    return new IcebergError(
      kind,
      `HTTP ${response.status}${detail === undefined ? '' : `: ${detail}`}`,
      {
        call: request.call,
        status: response.status,
        ...(request.table === undefined ? {} : { table: request.table }),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      },
    );
  }

  async #once(request: RestRequest): Promise<RestResponse> {
    const url = new URL(this.#options.uri.replace(/\/+$/, '') + request.path);
    for (const [key, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, value);
    }
    const context = {
      call: request.call,
      ...(request.table === undefined ? {} : { table: request.table }),
    };
    const timeout = AbortSignal.timeout(this.#options.timeoutMs);
    const signal =
      request.signal === undefined ? timeout : AbortSignal.any([timeout, request.signal]);
    try {
      const authorization = await this.#options.authorization(signal);
      const response = await fetch(url, {
        method: request.method,
        headers: {
          accept: 'application/json',
          ...this.#options.headers,
          ...(authorization === undefined ? {} : { authorization }),
          ...request.headers,
        },
        // Never follow a redirect: the catalog URI was checked against link-local and
        // metadata addresses, the Location it answers with was not.
        redirect: 'manual',
        signal,
      });
      const text = await readBoundedText(response, this.#options.maxResponseBytes, request.call);
      return { status: response.status, headers: response.headers, text };
    } catch (error) {
      if (error instanceof IcebergError) throw error;
      if (request.signal?.aborted === true) {
        throw new IcebergError(IcebergErrorKind.timeout, 'request cancelled by the caller', {
          ...context,
          cause: error,
          retryable: false,
        });
      }
      if (timeout.aborted) {
        throw new IcebergError(
          IcebergErrorKind.timeout,
          `no response within ${this.#options.timeoutMs} ms`,
          {
            ...context,
            cause: error,
          },
        );
      }
      throw new IcebergError(
        IcebergErrorKind.connection,
        `cannot reach the catalog: ${causeText(error)}`,
        {
          ...context,
          cause: error,
        },
      );
    }
  }
}

function causeText(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  return (error as Error).message;
}
