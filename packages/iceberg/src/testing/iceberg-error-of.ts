import { IcebergError } from '../errors/iceberg-error.ts';

/** The IcebergError `fn` throws; any other outcome fails the test. */
export function icebergErrorOf(fn: () => unknown): IcebergError {
  try {
    fn();
  } catch (error) {
    if (error instanceof IcebergError) return error;
    throw error;
  }
  throw new Error('expected an IcebergError');
}
