/** A catalog-vended credential for every location under `prefix`. */
export interface StorageCredential {
  readonly prefix: string;
  readonly config: Readonly<Record<string, string>>;
}

/** The credential whose prefix is the longest one that `location` starts with (REST spec). */
export function credentialFor(
  credentials: readonly StorageCredential[],
  location: string,
): StorageCredential | undefined {
  let best: StorageCredential | undefined;
  for (const credential of credentials) {
    if (
      location.startsWith(credential.prefix) &&
      (best === undefined || credential.prefix.length > best.prefix.length)
    ) {
      best = credential;
    }
  }
  return best;
}
