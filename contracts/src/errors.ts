/**
 * Typed errors that carry their HTTP status. Services throw them; they travel over NATS as data
 * (see `toWireError` / `fromWireError`) and the gateway turns them into the HTTP answer.
 */
export class CorralError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** 400: the request is malformed, incomplete or names something that does not fit. */
export class BadRequestError extends CorralError {
  constructor(message: string, details?: Record<string, unknown>, code = "bad_request") {
    super(400, code, message, details);
  }
}

/** 401: no identity, an unknown identity, or a role that does not allow the call. */
export class UnauthorizedError extends CorralError {
  constructor(message: string, details?: Record<string, unknown>) {
    super(401, "unauthorized", message, details);
  }
}

/** 403: the caller is known but the operation is forbidden to it. */
export class ForbiddenError extends CorralError {
  constructor(message: string) {
    super(403, "forbidden", message);
  }
}

/** 404: the named entity does not exist (or is not visible to the caller). */
export class NotFoundError extends CorralError {
  constructor(what: string, id: string) {
    super(404, "not_found", `${what} ${id} not found`);
  }
}

/** 409: the operation conflicts with current state (duplicate, quota, busy, not deletable). */
export class ConflictError extends CorralError {
  constructor(message: string, details?: Record<string, unknown>, code = "conflict") {
    super(409, code, message, details);
  }
}

/** 503: the service that owns the operation did not answer. */
export class UnavailableError extends CorralError {
  constructor(message: string) {
    super(503, "service_unavailable", message);
  }
}

/** An error as it travels over NATS: plain data, never a stack. */
export interface WireError {
  status: number;
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** Recognises a CorralError by shape, not `instanceof`, so a module loaded twice still matches. */
export function isCorralError(err: unknown): err is CorralError {
  return (
    err instanceof Error &&
    typeof (err as Partial<CorralError>).status === "number" &&
    typeof (err as Partial<CorralError>).code === "string"
  );
}

/** Converts any thrown value to its wire form; unknown errors become a 500 `internal` without details. */
export function toWireError(err: unknown): WireError {
  if (isCorralError(err)) {
    const wire: WireError = { status: err.status, code: err.code, message: err.message };
    if (err.details !== undefined) wire.details = err.details;
    return wire;
  }
  return { status: 500, code: "internal", message: "internal error" };
}

/** Rebuilds a CorralError from its wire form. */
export function fromWireError(wire: WireError): CorralError {
  return new CorralError(wire.status, wire.code, wire.message, wire.details);
}
