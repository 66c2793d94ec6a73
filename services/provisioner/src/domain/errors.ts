/** The named thing does not exist (HTTP 404). */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

/** The request contradicts the current state: a duplicate, a bound catalog (HTTP 409). */
export class ConflictError extends Error {
  override readonly name = 'ConflictError';
}

/** Well-formed but impossible: a missing catalog, a group too small (HTTP 422). */
export class UnprocessableError extends Error {
  override readonly name = 'UnprocessableError';
}

/** A dependency (the Kubernetes API server) did not answer; try again later (HTTP 503). */
export class UnavailableError extends Error {
  override readonly name = 'UnavailableError';
}

/** cpu and memory in canonical Kubernetes quantities. */
export interface Resources {
  readonly cpu: string;
  readonly memory: string;
}

export interface CapacityFigures {
  readonly requested: Resources;
  readonly allocatable: Resources;
  /** Held by other Icepack groups (their quotas, or their requests if the quota is not there yet). */
  readonly reserved: Resources;
  readonly free: Resources;
}

/** The group does not fit what is left of the cluster (or this machine in local mode): HTTP 422. */
export class CapacityError extends Error {
  override readonly name = 'CapacityError';
  readonly figures: CapacityFigures;

  constructor(message: string, figures: CapacityFigures) {
    super(message);
    this.figures = figures;
  }
}
