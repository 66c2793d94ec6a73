import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { ConfigError } from './config-error.ts';
import { rememberSecretKeys } from './redact-config.ts';
import { isSecret } from './secret.ts';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Parses the environment with a zod object schema whose keys are variable names.
 *
 * - An empty variable counts as unset, so `FOO=` falls back to the default.
 * - A secret variable `NAME` may instead be given as `NAME_FILE`, a path whose content
 *   (without the trailing newline) is the value — how Kubernetes and Docker mount secrets.
 * - Any problem throws a {@link ConfigError} naming every bad variable at once.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, env: Env = process.env): z.output<S> {
  const input: Record<string, string> = {};
  const problems: string[] = [];
  const secretKeys: string[] = [];

  const shape: Readonly<Record<string, z.ZodType>> = schema.shape;
  for (const [name, field] of Object.entries(shape)) {
    const direct = nonEmpty(env[name]);
    if (isSecret(field)) {
      secretKeys.push(name);
      const file = nonEmpty(env[`${name}_FILE`]);
      if (file !== undefined) {
        if (direct !== undefined) {
          problems.push(`${name}: set either ${name} or ${name}_FILE, not both`);
          continue;
        }
        try {
          input[name] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
        } catch (error) {
          problems.push(`${name}_FILE: cannot read ${file}: ${(error as Error).message}`);
        }
        continue;
      }
    }
    if (direct !== undefined) input[name] = direct;
  }

  const result = schema.safeParse(input);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const name = issue.path.length > 0 ? issue.path.map(String).join('.') : '(config)';
      // Already reported while reading the variable (e.g. its _FILE).
      if (problems.some((p) => p.startsWith(`${name}:`) || p.startsWith(`${name}_FILE:`))) {
        continue;
      }
      // Never echo a secret's value back: zod messages can quote the input.
      const message = secretKeys.includes(name) ? `invalid value (${issue.code})` : issue.message;
      const unset = issue.path.length === 1 && input[name] === undefined;
      problems.push(`${name}: ${unset ? 'required, not set' : message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const config = result.data as z.output<S>;
  rememberSecretKeys(config, secretKeys);
  return config;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
