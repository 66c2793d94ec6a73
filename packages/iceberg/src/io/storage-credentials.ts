/** A catalog-vended credential for every location under `prefix`. */
export interface StorageCredential {
  readonly prefix: string;
  readonly config: Readonly<Record<string, string>>;
}

/** `s3a://` and `s3n://` name the same objects as `s3://` (Hadoop's spellings). */
function normalize(location: string): string {
  return location.replace(/^s3[an]:\/\//, 's3://');
}

/**
 * The credential whose prefix is the longest one that `location` starts with (REST spec);
 * S3 scheme spellings are treated as one.
 */
export function credentialFor(
  credentials: readonly StorageCredential[],
  location: string,
): StorageCredential | undefined {
  let best: StorageCredential | undefined;
  location = normalize(location);
  for (const credential of credentials) {
    if (
      location.startsWith(normalize(credential.prefix)) &&
      (best === undefined || credential.prefix.length > best.prefix.length)
    ) {
      best = credential;
    }
  }
  return best;
}
