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

/** The IcebergError `promise` rejects with; any other outcome fails the test. */
export async function rejectedIcebergError(promise: Promise<unknown>): Promise<IcebergError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof IcebergError) return error;
    throw error;
  }
  throw new Error('expected an IcebergError');
}
