import { baseConfigSchema } from '@icepack/runtime';
import type { z } from 'zod';

/** Environment variables of the dispatcher; see README.md. */
export const configSchema = baseConfigSchema('dispatcher');

export type Config = z.output<typeof configSchema>;
