import { existsSync, readFileSync } from 'node:fs';
import { open, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { isProcessAlive } from '../store/lock.ts';
import { syncDirectory } from '../store/publish.ts';
import type { TestResult } from './check.ts';
import type { ChangeMark } from './check-scope.ts';

/**
 * The last results of `exledger check` (and of the check step of `exledger run`), kept in a JSON
 * file beside the database, as dbt keeps target/run_results.json: the check opens the database
 * read-only (it runs beside analysts and on a full disk), so its results cannot go into it.
 * `exledger docs` reads them to show each test's last result.
 */

/** One test's last result, without its sample rows (they may hold account data; the check prints them). */
export interface RecordedTestResult {
  /** `<layer>/<name>`. */
  id: string;
  status: TestResult['status'];
  /** Rows it returned. */
  offending: number;
  /** Why it could not run (status `error`). */
  message?: string;
  ms: number;
  /** When the check that ran it finished (ISO 8601 UTC): a selected check updates only its own tests. */
  checkedAt: string;
  /**
   * What it read: every row (whole), the rows changed since its last pass (changed), or nothing,
   * its last pass standing (unchanged). Absent in results written before the incremental check.
   */
  scope?: 'whole' | 'changed' | 'unchanged';
  /** Hash of its SQL, the macros and the settings it reads: a next check of what changed builds on this result only if it is the same. */
  fingerprint?: string;
  /**
   * The last build change (settings.model_changes change_seq, and its recorded_at) the result
   * covers: every change up to it was checked. A next check of what changed reads the changes after it.
   */
  through?: ChangeMark;
}

/** The file: `<db stem>.check-results.json`. */
export interface CheckResultsFile {
  /** 1 for this layout. */
  version: 1;
  /** The database checked (absolute path). */
  database: string;
  /**
   * In the copy published beside the published database (publishCheckResults): that copy (absolute
   * path), which `database` was copied to, checks and all. Absent in the database's own file.
   */
  publishedAs?: string;
  /** When the last check started and finished (ISO 8601 UTC). */
  startedAt: string;
  finishedAt: string;
  results: RecordedTestResult[];
}

const EXTENSION = '.duckdb';

/**
 * Where the check results of `db` are kept, in the same folder: `./data/exledger.duckdb` →
 * `./data/exledger.check-results.json`; a name without `.duckdb` gets `.check-results.json` appended.
 */
export function checkResultsPath(db: string): string {
  const stem = db.endsWith(EXTENSION) && path.basename(db) !== EXTENSION ? db.slice(0, -EXTENSION.length) : db;
  return `${path.resolve(stem)}.check-results.json`;
}

/** Options of recordCheckResults. */
export interface RecordOptions {
  /** @default now */
  finishedAt?: Date;
  /**
   * The check ran only some tests (`--select`): the other tests keep their earlier results
   * (each with its own `checkedAt`), if those are of the same database. @default false
   */
  partial?: boolean;
  /** The last build change the check covered (CheckScope.through). @default none: the database has no change record */
  through?: ChangeMark;
}

/**
 * Writes the results of a check of `db` atomically: into a temporary file beside it, fsynced,
 * then renamed over the previous one, so a reader sees the previous results or these, never half
 * a file. On failure the temporary file is removed and the error thrown (the previous file stays).
 */
export async function recordCheckResults(db: string, results: readonly TestResult[], startedAt: Date, options: RecordOptions = {}): Promise<string> {
  const file = checkResultsPath(db);
  const checkedAt = (options.finishedAt ?? new Date()).toISOString();
  const fresh: RecordedTestResult[] = results.map((result) => ({
    id: result.id,
    status: result.status,
    offending: result.offending,
    ...(result.message === undefined ? {} : { message: result.message }),
    ms: Math.round(result.ms),
    checkedAt,
    ...(result.scope === undefined ? {} : { scope: result.scope }),
    ...(result.fingerprint === undefined ? {} : { fingerprint: result.fingerprint }),
    ...(options.through === undefined ? {} : { through: options.through }),
  }));
  const previous = options.partial === true ? readCheckResults(db) : undefined;
  // A partial check replaces its tests' entries in place and adds the ones not there yet.
  const earlier = previous?.kind === 'recorded' && previous.results.database === path.resolve(db) ? previous.results.results : [];
  const byId = new Map(fresh.map((result) => [result.id, result]));
  const merged = [...earlier.map((result) => byId.get(result.id) ?? result), ...fresh.filter((result) => !earlier.some((known) => known.id === result.id))];
  const content: CheckResultsFile = { version: 1, database: path.resolve(db), startedAt: startedAt.toISOString(), finishedAt: checkedAt, results: merged };
  return writeResultsFile(file, content);
}

/**
 * Publishes the last check results of `db` beside its published copy `published` (the published
 * copy's own results file, see checkResultsPath), so that `exledger docs` on the published copy
 * shows them: the same results, marked with the copy they were published with (`publishedAs`).
 * When `db` has no readable results, the published copy's file is removed instead (results of an
 * earlier database must not describe this one). Returns the file written, or null when none.
 */
export async function publishCheckResults(db: string, published: string): Promise<string | null> {
  const last = readCheckResults(db);
  if (last.kind !== 'recorded') {
    await rm(checkResultsPath(published), { force: true });
    return null;
  }
  return writeResultsFile(checkResultsPath(published), { ...last.results, publishedAs: path.resolve(published) });
}

/** Writes a results file whole: a temporary file beside it, fsynced, renamed over it. */
async function writeResultsFile(file: string, content: CheckResultsFile): Promise<string> {
  const prefix = `.${path.basename(file)}.tmp-`;
  const temporary = path.join(path.dirname(file), `${prefix}${process.pid}`);
  // What a check killed while writing left (its process is gone).
  for (const name of await readdir(path.dirname(file))) {
    if (name.startsWith(prefix) && !isProcessAlive(Number(name.slice(prefix.length)))) await rm(path.join(path.dirname(file), name), { force: true });
  }
  try {
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(`${JSON.stringify(content, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
    await syncDirectory(path.dirname(file));
    return file;
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** What is known of the last check of a database: its results, none yet, or a file that cannot be read. */
export type LastCheck = { kind: 'recorded'; file: string; results: CheckResultsFile } | { kind: 'none'; file: string } | { kind: 'unreadable'; file: string; reason: string };

/** Reads the last check results of `db` (see {@link checkResultsPath}). */
export function readCheckResults(db: string): LastCheck {
  const file = checkResultsPath(db);
  if (!existsSync(file)) return { kind: 'none', file };
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<CheckResultsFile>;
    if (parsed.version !== 1 || !Array.isArray(parsed.results) || typeof parsed.finishedAt !== 'string' || typeof parsed.database !== 'string' || parsed.results.some((result) => typeof result?.checkedAt !== 'string')) {
      return { kind: 'unreadable', file, reason: 'not a check results file of this version' };
    }
    return { kind: 'recorded', file, results: parsed as CheckResultsFile };
  } catch (error) {
    return { kind: 'unreadable', file, reason: (error as Error).message.split('\n')[0]! };
  }
}
