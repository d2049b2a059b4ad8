import path from 'node:path';
import { DiskFullError, type DiskFullCode } from './errors.ts';

/**
 * Recognizes "the disk is full" in what Node or DuckDB threw, so that every writer reports it the
 * same way: one DiskFullError naming the file, instead of an errno or a DuckDB message.
 *
 * What DuckDB 1.5 says (measured on a full tmpfs):
 * - a commit whose write-ahead log cannot grow: `TransactionContext Error: Failed to commit: Could
 *   not write file "<db>.wal": No space left on device` (the transaction is gone, the database
 *   still works);
 * - a statement that writes blocks into the database file (a large CREATE TABLE AS):
 *   `IO Error: Could not write file "<db>": No space left on device` (the transaction is aborted);
 * - a checkpoint (explicit, at a commit past checkpoint_threshold, or at close, where it fails
 *   silently): `FATAL Error: Failed to create checkpoint because of error: Could not write file
 *   "<db>": No space left on device`; every later statement of that instance is refused with
 *   `database has been invalidated … Original error: "…"`. The WAL stays; the next open replays it;
 * - a query spilling to the temporary folder: `Out of Memory Error: failed to offload data block
 *   … 'max_temp_directory_size' … available disk space on the drive where the 'temp_directory' is`.
 */
export function diskFullOf(error: unknown, options: { file: string; doing: string; kept: string; tempDirectory?: string }): DiskFullError | undefined {
  if (error instanceof DiskFullError) return error;
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  let code: DiskFullCode | undefined;
  if (errno === 'ENOSPC' || /No space left on device/i.test(message)) code = 'ENOSPC';
  else if (errno === 'EDQUOT' || /Disk quota exceeded/i.test(message)) code = 'EDQUOT';
  else if (/failed to offload data block/i.test(message) && /temp_directory/i.test(message)) code = 'ENOSPC';
  if (code === undefined) return undefined;
  // The file DuckDB could not write, when it is not the one we name (its WAL, its temporary folder).
  const file = path.resolve(options.file);
  const named = /file "([^"]+)"/.exec(message)?.[1] ?? (/offload/i.test(message) ? options.tempDirectory : undefined);
  const written = named === undefined || path.resolve(named) === file ? undefined : path.resolve(named);
  return new DiskFullError(file, { code, doing: options.doing, kept: options.kept, written, cause: error });
}
