// `@icepack/provisioner/config`: the provisioner's settings as an operator gives them — the
// schema of the environment variables it reads, and the parser of the bootstrap file of
// catalogs and resource groups (ICEPACK_BOOTSTRAP_FILE) — for checks outside the
// service that the deployment files (Helm chart, docker-compose.yml) give it a configuration it
// accepts. Only `main.ts` loads the configuration; nothing else of the service is exported here.
export { configSchema } from './config.ts';
export { parseBootstrap } from './domain/bootstrap-file.ts';
export type { Bootstrap } from './domain/bootstrap-file.ts';
