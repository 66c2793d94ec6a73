export { startFakeKubeApi } from './fake-kube-api.ts';
export type { FakeKubeApi, FakeKubeApiOptions, RequestHold } from './fake-kube-api.ts';
export { FakeKubeStore, PatchType } from './object-store.ts';
export type {
  DeletePreconditions,
  FakeKubeStoreOptions,
  ListOptions,
  NodeSpec,
  WatchListener,
  WatchOptions,
  WriteOptions,
} from './object-store.ts';
export { KubeApiError, StatusReason } from './api-status.ts';
export { WatchEventType } from './kube-object.ts';
export type { KubeObject, ObjectMeta } from './kube-object.ts';
export { RESOURCE_TYPES, resourceTypeOf, SPARK_GROUP } from './resource-types.ts';
export type { ResourceType } from './resource-types.ts';
export { FINISHED_STATES, sparkUsage } from './spark-quota-usage.ts';
export { kubeConfigFor } from './kube-config.ts';
