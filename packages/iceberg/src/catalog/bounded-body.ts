import { IcebergError, IcebergErrorKind } from '../errors/iceberg-error.ts';

/**
 * Most bytes one catalog response may have: 64 MiB, above the largest table metadata JSON
 * Icepack expects, small enough that a hostile or broken catalog cannot exhaust memory.
 * `RestCatalogOptions.maxResponseBytes` (the scanner's ICEPACK_SCANNER_CATALOG_MAX_RESPONSE_MB).
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 2 ** 20;

/**
 * The response body as text, read up to `maxBytes`: a larger body (announced by
 * `content-length` or found while reading) is a non-retryable `bad-response` error naming
 * the call and the limit; the rest of the body is not read.
 */
export async function readBoundedText(
  response: Response,
  maxBytes: number,
  call: string,
): Promise<string> {
  const tooLarge = (): IcebergError =>
    new IcebergError(
      IcebergErrorKind.badResponse,
      `response body larger than the limit of ${String(maxBytes)} bytes`,
      { call, status: response.status, retryable: false },
    );
  const announced = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(announced) && announced > maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const body = response.body;
  if (body === null) return '';
  const reader = body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}
