// `@icepack/metadata-scanner/config`: the service's settings as an operator gives them — the schema of
// the environment variables it reads — for checks outside the service that the deployment
// files (Helm chart, docker-compose.yml) give it a configuration it accepts. Only `main.ts`
// loads the configuration; nothing else of the service is exported here.
export { configSchema } from './config.ts';
