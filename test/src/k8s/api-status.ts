import type { ResourceType } from './resource-types.ts';
import { qualifiedResource } from './resource-types.ts';

/** `StatusReason` values the fake API server answers with, as the real one spells them. */
export const StatusReason = {
  notFound: 'NotFound',
  alreadyExists: 'AlreadyExists',
  conflict: 'Conflict',
  invalid: 'Invalid',
  badRequest: 'BadRequest',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  methodNotAllowed: 'MethodNotAllowed',
  unsupportedMediaType: 'UnsupportedMediaType',
} as const;
export type StatusReason = (typeof StatusReason)[keyof typeof StatusReason];

export interface StatusCause {
  readonly reason: string;
  readonly message: string;
  readonly field: string;
}

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly causes?: readonly StatusCause[];
}

/** A `metav1.Status` failure; the HTTP layer sends `status()` with `code`. */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  readonly code: number;
  readonly reason: StatusReason;
  readonly details: StatusDetails | undefined;

  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  status(): Record<string, unknown> {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details === undefined ? {} : { details: this.details }),
      code: this.code,
    };
  }
}

function details(type: ResourceType, name: string): StatusDetails {
  return type.group === ''
    ? { name, kind: type.plural }
    : { name, group: type.group, kind: type.plural };
}

export function notFound(type: ResourceType, name: string): KubeApiError {
  return new KubeApiError(
    404,
    StatusReason.notFound,
    `${qualifiedResource(type)} "${name}" not found`,
    details(type, name),
  );
}

export function alreadyExists(type: ResourceType, name: string): KubeApiError {
  return new KubeApiError(
    409,
    StatusReason.alreadyExists,
    `${qualifiedResource(type)} "${name}" already exists`,
    details(type, name),
  );
}

export function conflict(type: ResourceType, name: string, why: string): KubeApiError {
  return new KubeApiError(
    409,
    StatusReason.conflict,
    `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": ${why}`,
    details(type, name),
  );
}

export const MODIFIED_SINCE =
  'the object has been modified; please apply your changes to the latest version and try again';

/** 422 with one cause per invalid field, worded like the real API server. */
export function invalid(
  type: ResourceType,
  name: string,
  causes: readonly StatusCause[],
): KubeApiError {
  const list = causes.map((cause) => `${cause.field}: ${cause.message}`);
  const summary = list.length === 1 ? (list[0] ?? '') : `[${list.join(', ')}]`;
  return new KubeApiError(
    422,
    StatusReason.invalid,
    `${type.kind} "${name}" is invalid: ${summary}`,
    {
      name,
      ...(type.group === '' ? {} : { group: type.group }),
      kind: type.kind,
      causes,
    },
  );
}

export function badRequest(message: string): KubeApiError {
  return new KubeApiError(400, StatusReason.badRequest, message);
}

/** The success `Status` a DELETE of an ordinary object answers with. */
export function deletedStatus(
  type: ResourceType,
  name: string,
  uid: string,
): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { ...details(type, name), uid },
  };
}
