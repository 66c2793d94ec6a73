export { infraEnv } from './infra/env.ts';
export type { InfraEnv } from './infra/env.ts';
