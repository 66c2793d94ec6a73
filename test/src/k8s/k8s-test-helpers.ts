import { ApiException } from '@kubernetes/client-node';

/** The HTTP code and parsed `Status` body of a rejected client-node call. */
export async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: number; status: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiException) {
      const body = error.body as unknown;
      const status = (typeof body === 'string' ? JSON.parse(body) : body) as Record<
        string,
        unknown
      >;
      return { code: error.code, status };
    }
    throw error;
  }
  throw new Error('expected the call to be rejected');
}
