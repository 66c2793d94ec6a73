// What other packages' tests use of the deployment checks: the chart as `helm template` renders
// it, docker-compose.yml as `docker compose config` resolves it, and the repository root the
// deployment files are read from.
export { DeployToolMissingError, REPO_ROOT } from './deploy-tools.ts';
export { composeConfig } from './compose-file.ts';
export { LOCAL_ENV_FILE, localEnvNames } from './local-env.ts';
export type { ComposeService } from './compose-file.ts';
export { ofKind, RELEASE_NAMESPACE, renderChart } from './rendered-chart.ts';
export type { KubeObject } from './rendered-chart.ts';
