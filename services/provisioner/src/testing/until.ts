/**
 * Polls `probe` every 100 ms until it answers something other than undefined or false, and
 * returns that; fails naming `what` after `attempts` tries (a bound, not a timed assertion).
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  attempts = 600,
): Promise<T> {
  for (let i = 0; i < attempts; i += 1) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}
