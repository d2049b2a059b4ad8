/**
 * The error family of exledger. Errors carry fields, not just strings, so the CLI's top level
 * can print one actionable line and choose the exit code, and the retry layer can ask
 * `isRetryable` instead of parsing messages.
 *
 * Messages never contain credentials: no error is built from request headers, and request
 * parameters that reach a message are the exchange-visible ones (symbol, times, pages).
 */

/** Base class: every error exledger raises on purpose. */
export abstract class ExledgerError extends Error {
  /** Whether trying the same thing again later can succeed. */
  abstract readonly isRetryable: boolean;
  /** What the user should do about it, printed after the message by the CLI. */
  readonly hint: string | undefined;

  constructor(message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options?.hint;
  }
}

/** Bad configuration, flag or environment variable. `key` names the thing to fix. */
export class ConfigError extends ExledgerError {
  readonly isRetryable = false;
  readonly key: string;

  constructor(key: string, message: string, options?: { hint?: string; cause?: unknown }) {
    super(`${key}: ${message}`, options);
    this.key = key;
  }
}

/**
 * A command line exledger cannot run: an unknown command or option, a value that is not one of
 * an option's choices, a missing argument. The message names what was given and, where one is
 * close, the name it probably meant; the hint says where the valid ones are listed.
 */
export class UsageError extends ExledgerError {
  readonly isRetryable = false;
}

/** Fields that describe a failed exchange request. */
export interface ExchangeErrorFields {
  /** HTTP status, or 0 when no response arrived (reset, timeout, refused). */
  status: number;
  /** The exchange's error code (`"40009"`), or a local one for transport faults (`"ECONNRESET"`, `"TIMEOUT"`, `"MALFORMED_BODY"`, `"HTTP_503"`). */
  code: string;
  /** The endpoint id, e.g. `spot.fills`. */
  endpoint: string;
  /** Whether the same request may succeed later. */
  isRetryable: boolean;
  hint?: string;
  cause?: unknown;
}

/** A request the exchange refused or could not answer. */
export class ExchangeError extends ExledgerError {
  readonly isRetryable: boolean;
  readonly status: number;
  readonly code: string;
  readonly endpoint: string;

  constructor(message: string, fields: ExchangeErrorFields) {
    super(message, { hint: fields.hint, cause: fields.cause });
    this.status = fields.status;
    this.code = fields.code;
    this.endpoint = fields.endpoint;
    this.isRetryable = fields.isRetryable;
  }
}

/** Credentials, signature, clock or permission refused: retrying never helps. */
export class AuthError extends ExchangeError {
  constructor(message: string, fields: Omit<ExchangeErrorFields, 'isRetryable'>) {
    super(message, { ...fields, isRetryable: false });
  }
}

/** Over the exchange's request-weight budget (HTTP 429): slow down and try again. */
export class RateLimitError extends ExchangeError {
  constructor(message: string, fields: Omit<ExchangeErrorFields, 'isRetryable' | 'code' | 'status'>) {
    super(message, { ...fields, status: 429, code: '429', isRetryable: true });
  }
}

/** A response that breaks the API contract (missing or mistyped field). Final: data is not stored. */
export class DataError extends ExledgerError {
  readonly isRetryable = false;
  readonly endpoint: string | undefined;

  constructor(message: string, options?: { endpoint?: string; hint?: string; cause?: unknown }) {
    super(message, options);
    this.endpoint = options?.endpoint;
  }
}

/** DuckDB refused the query (syntax, unknown table, a write on the read-only copy): exit 1. */
export class QueryError extends ExledgerError {
  readonly isRetryable = false;
}

/** An error about one file: its message starts with the file's path. */
export abstract class FileError extends ExledgerError {
  /** The file (or folder) it is about. */
  readonly file: string;

  constructor(file: string, message: string, options?: { hint?: string; cause?: unknown }) {
    super(`${file}: ${message}`, options);
    this.file = file;
  }
}

/** Publishing failed; `file` is the file it was working on. Nothing was published. */
export class PublishError extends FileError {
  readonly isRetryable = false;
}

/**
 * The database (or its run) is held by another process: a running sync or run, or a client
 * holding the file for writing (`file`: the database, or its run lock). Not bad input: the same
 * command succeeds once it is done.
 */
export class DatabaseBusyError extends FileError {
  readonly isRetryable = true;
}

/** The command was stopped by a signal (Ctrl-C, SIGTERM); what was committed stays. */
export class InterruptedError extends ExledgerError {
  readonly isRetryable = true;
  /** The signal, e.g. `SIGTERM`. */
  readonly signal: string;

  constructor(signal: string, message = `interrupted by ${signal}`) {
    super(message, { hint: 'run the same command again: it continues from what was committed (nothing is lost or duplicated)' });
    this.signal = signal;
  }
}

/** Writing an output (a workbook, a log, the published copy) failed part-way: a full disk, a vanished folder. */
export class OutputError extends FileError {
  readonly isRetryable = false;
}

/**
 * The archive of the raw history (archive.dir, restore --from) cannot be used as it is: a file the
 * manifest lists is missing or does not match its SHA-256, the manifest does not read, or files
 * are there without a manifest. `file` names the one to look at. Nothing was written.
 */
export class ArchiveError extends FileError {
  readonly isRetryable = false;
}

/** Which "disk full" it was: the device has no free blocks, or this user's quota is used up. */
export type DiskFullCode = 'ENOSPC' | 'EDQUOT';

/**
 * A file could not be written because its disk is full (or the user's quota is used up): the
 * database, its write-ahead log or temporary folder, a workbook, the published copy, a lock or
 * the run's log. Nothing that was committed or published before is lost; free space and run the
 * same command again. `file` is the file exledger was writing (the database for its WAL).
 */
export class DiskFullError extends FileError {
  readonly isRetryable = true;
  readonly code: DiskFullCode;
  /** What was being done, e.g. `building marts.fees_daily`. */
  readonly doing: string;
  /** What is left as it was, e.g. `nothing of this build was lost`. */
  readonly kept: string;
  /** The file that could not grow, when it is not `file` itself (the database's WAL or temporary folder). */
  readonly written: string | undefined;

  constructor(file: string, fields: { code: DiskFullCode; doing: string; kept: string; written?: string; cause?: unknown; hint?: string }) {
    const what = fields.code === 'EDQUOT' ? 'the disk quota is used up (EDQUOT)' : 'no space left on the device (ENOSPC)';
    const written = fields.written === undefined || fields.written === file ? '' : ` (writing ${fields.written})`;
    super(file, `${what} while ${fields.doing}${written}; ${fields.kept}`, {
      hint: fields.hint ?? 'free space on that disk (or give it a larger one), then run the same command again',
      cause: fields.cause,
    });
    this.code = fields.code;
    this.doing = fields.doing;
    this.kept = fields.kept;
    this.written = fields.written === file ? undefined : fields.written;
  }

  /** The same failure, told for the step that met it. */
  during(doing: string, kept: string): DiskFullError {
    return new DiskFullError(this.file, { code: this.code, doing, kept, written: this.written, cause: this.cause, hint: this.hint });
  }
}
