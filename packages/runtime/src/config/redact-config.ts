const REDACTED = '[redacted]';

// Which keys of a loaded config are secret; kept beside the object so the config itself
// stays a plain, typed value.
const secretKeysByConfig = new WeakMap<object, ReadonlySet<string>>();

// Backstop for configs not built by loadConfig: names that look like they hold a secret.
const SECRET_NAME = /(PASSWORD|SECRET|TOKEN|CREDENTIAL|PRIVATE_KEY|API_KEY)/i;

export function rememberSecretKeys(config: object, keys: readonly string[]): void {
  secretKeysByConfig.set(config, new Set(keys));
}

/**
 * A copy of the config that is safe to log: secret values are replaced with `[redacted]`.
 * A secret URL keeps its scheme and host and loses its credentials
 * (`redis://:hunter2@redis:6379` → `redis://[redacted]@redis:6379`), which is what an
 * operator needs to debug a connection.
 */
export function redactConfig<T extends object>(config: T): Record<keyof T, unknown> {
  const secretKeys = secretKeysByConfig.get(config) ?? new Set<string>();
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    const secret = secretKeys.has(key) || SECRET_NAME.test(key);
    out[key] = secret && value !== undefined ? redactValue(value) : value;
  }
  return out as Record<keyof T, unknown>;
}

function redactValue(value: unknown): string {
  if (typeof value === 'string' && /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    try {
      const url = new URL(value);
      if (url.username === '' && url.password === '') return `${url.protocol}//${url.host}`;
      return `${url.protocol}//${REDACTED}@${url.host}`;
    } catch {
      return REDACTED;
    }
  }
  return REDACTED;
}
