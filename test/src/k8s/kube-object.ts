/** Metadata the fake API server reads and maintains; everything else passes through. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  creationTimestamp: string;
  generation: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

/** Any object the fake stores: `apiVersion`, `kind`, `metadata` and whatever the kind has. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export const WatchEventType = {
  added: 'ADDED',
  modified: 'MODIFIED',
  deleted: 'DELETED',
  bookmark: 'BOOKMARK',
  error: 'ERROR',
} as const;
export type WatchEventType = (typeof WatchEventType)[keyof typeof WatchEventType];

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
