import { baseConfigSchema, secret } from '@icepack/runtime';
import { z } from 'zod';

/** Environment variables of the provisioner; see README.md. */
export const configSchema = baseConfigSchema('provisioner').extend({
  /** Bearer token the API requires. */
  ICEPACK_API_TOKEN: secret(z.string().min(16, 'expected at least 16 characters')),
});

export type Config = z.output<typeof configSchema>;
