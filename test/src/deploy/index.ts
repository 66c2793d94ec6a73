// What other packages' tests use of the deployment checks: the chart as `helm template` renders it.
export { DeployToolMissingError } from './deploy-tools.ts';
export { ofKind, RELEASE_NAMESPACE, renderChart } from './rendered-chart.ts';
export type { KubeObject } from './rendered-chart.ts';
