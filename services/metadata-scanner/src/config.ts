import { baseConfigSchema } from '@icepack/runtime';
import type { z } from 'zod';

/** Environment variables of the metadata-scanner; see README.md. */
export const configSchema = baseConfigSchema('metadata-scanner');

export type Config = z.output<typeof configSchema>;
