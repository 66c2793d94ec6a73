/** An error with an HTTP status meant for the client (404 not found, 409 conflict…). */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}
