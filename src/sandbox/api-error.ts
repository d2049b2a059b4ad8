/**
 * A refused exchange request: its HTTP status, exchange code and message.
 *
 * Every group (spot, rebate and futures) answers a refusal with the spot error body
 * `{code, msg, requestTime, data: null}` (exchange-notes.md "Errors"). Messages are fixed
 * texts naming parameters; they never echo a header value, so no secret, passphrase or
 * signature can leak through them.
 */
export class SandboxApiError extends Error {
  /** HTTP status of the answer. */
  readonly status: number;
  /** Exchange error code, a string of digits. */
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'SandboxApiError';
    this.status = status;
    this.code = code;
  }
}

/** 40017 "parameter verification failed" (exchange-notes.md "Errors"). */
export function invalidParameter(message: string): SandboxApiError {
  return new SandboxApiError(400, '40017', `Parameter verification failed: ${message}`);
}

/** 40102 "trading pair does not exist" (exchange-notes.md "Paging and ordering": an error, not an empty page). */
export function unknownSymbol(symbol: string): SandboxApiError {
  return new SandboxApiError(400, '40102', `The trading pair ${JSON.stringify(symbol)} does not exist`);
}

/** 40707 "start time after end time". */
export function startAfterEnd(startName: string, endName: string): SandboxApiError {
  return new SandboxApiError(400, '40707', `${startName} must not be greater than ${endName}`);
}

/** 40704 "only the last N days/months of history are accessible" (exchange-notes.md "Paging and ordering", history depth). */
export function beyondHorizon(horizonDays: number): SandboxApiError {
  return new SandboxApiError(400, '40704', `Only the last ${horizonDays} days of history are accessible`);
}
