import { baseConfigSchema } from '@icepack/runtime';
import type { z } from 'zod';

/** Environment variables of the provisioner; see README.md. */
export const configSchema = baseConfigSchema('provisioner');

export type Config = z.output<typeof configSchema>;
