import { ConflictError } from './errors.ts';
import { INSTALLATION_ANNOTATION, MANAGED_BY, MANAGED_BY_LABEL } from './kube-objects.ts';

/*
 * A namespace is Icepack's to change and delete only when it carries the managed-by label
 * and the annotation INSTALLATION_ANNOTATION naming this installation
 * (`ICEPACK_INSTALLATION_ID`): two installations on one cluster, or a namespace someone else
 * named `icepack-<group>`, never take each other's.
 */

/** What a namespace's metadata says about who owns it. */
export interface NamespaceMeta {
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
}

export const Ownership = {
  /** No such namespace: the provisioner may create it. */
  absent: 'absent',
  /** Created by this installation: the provisioner may change and delete it. */
  owned: 'owned',
  /** Exists but is not this installation's: never adopted, changed or deleted. */
  foreign: 'foreign',
} as const;

export type NamespaceOwnership =
  | { readonly kind: typeof Ownership.absent | typeof Ownership.owned }
  | { readonly kind: typeof Ownership.foreign; readonly reason: string };

/** Whose namespace this is, from its label and annotation. Pure. */
export function ownershipOf(
  meta: NamespaceMeta | undefined,
  installation: string,
): NamespaceOwnership {
  if (meta === undefined) return { kind: Ownership.absent };
  const managedBy = meta.labels?.[MANAGED_BY_LABEL];
  if (managedBy !== MANAGED_BY) {
    return {
      kind: Ownership.foreign,
      reason:
        managedBy === undefined
          ? `it has no label ${MANAGED_BY_LABEL}=${MANAGED_BY}`
          : `its label ${MANAGED_BY_LABEL} is "${managedBy}", not "${MANAGED_BY}"`,
    };
  }
  const owner = meta.annotations?.[INSTALLATION_ANNOTATION];
  if (owner !== installation) {
    return {
      kind: Ownership.foreign,
      reason:
        owner === undefined
          ? `it has no annotation ${INSTALLATION_ANNOTATION}`
          : `its annotation ${INSTALLATION_ANNOTATION} names installation "${owner}"`,
    };
  }
  return { kind: Ownership.owned };
}

/** An existing namespace that is not this installation's (HTTP 409): never adopted or deleted. */
export class ForeignNamespaceError extends ConflictError {
  readonly namespace: string;

  constructor(namespace: string, installation: string, reason: string) {
    super(
      `namespace "${namespace}" already exists and is not owned by this Icepack installation ` +
        `("${installation}"): ${reason}. Icepack neither adopts nor deletes it; choose another ` +
        `group name, or remove the namespace, or mark it as this installation's ` +
        `(label ${MANAGED_BY_LABEL}=${MANAGED_BY}, annotation ${INSTALLATION_ANNOTATION}=${installation})`,
    );
    this.namespace = namespace;
  }
}
