import { baseConfigSchema } from '@icepack/runtime';
import type { z } from 'zod';

/** Environment variables of the planner; see README.md. */
export const configSchema = baseConfigSchema('planner');

export type Config = z.output<typeof configSchema>;
