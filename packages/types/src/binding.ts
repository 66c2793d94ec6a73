import { z } from 'zod';
import { parseWith } from './validation-error.ts';
import { dnsLabel, isoDateTime } from './primitives.ts';
import { DEFAULT_SMALL_SLOTS, MAX_SMALL_SLOTS, sparkSettingsSchema } from './resource-group.ts';

export const BindingState = {
  /** Dispatchers run this catalog's tasks. */
  ready: 'ready',
  /** Finish running tasks, start no new ones (group being removed or resized). */
  draining: 'draining',
} as const;
export type BindingState = (typeof BindingState)[keyof typeof BindingState];

export const Runner = {
  local: 'local',
  sparkOperator: 'spark-operator',
} as const;
export type Runner = (typeof Runner)[keyof typeof Runner];

/**
 * A catalog bound to its resource group, as the dispatcher needs it. Published by the
 * provisioner on `icepack.bindings`, keyed by catalog; a tombstone unbinds.
 */
export const bindingSchema = z.object({
  catalog: dnsLabel(63),
  group: dnsLabel(63),
  /** Kubernetes namespace the jobs run in (`icepack-<group>`). */
  namespace: dnsLabel(63),
  /** Tasks of any size that run at once (large tasks take at most these). */
  slots: z.int().min(1),
  /**
   * Further tasks that run at once, small ones only (ADR 0029). A binding published before
   * the small-task lane existed has none on the topic: the group's default, 1.
   */
  smallSlots: z.int().min(0).max(MAX_SMALL_SLOTS).default(DEFAULT_SMALL_SLOTS),
  cpu: z.string().min(1),
  memory: z.string().min(1),
  /** Resolved: defaults applied. */
  spark: sparkSettingsSchema,
  state: z.enum(BindingState),
  runner: z.enum(Runner),
  updatedAt: isoDateTime,
});
export type Binding = z.output<typeof bindingSchema>;

/**
 * `bindingSchema` as `BindingUpdated` on `icepack.bindings` carries it: unknown keys in `spark`
 * are ignored too, as at the top (docs/messages.md, "Versioning"), so a Spark setting a newer
 * provisioner adds does not dead-letter the binding, and unbind the catalog, on an older
 * consumer.
 */
export const publishedBindingSchema = bindingSchema.extend({ spark: sparkSettingsSchema.strip() });

/** Validates a binding; throws `ValidationError` naming the field. */
export function parseBinding(value: unknown): Binding {
  return parseWith(bindingSchema, value, 'binding');
}
