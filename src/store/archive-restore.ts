import { existsSync } from 'node:fs';
import { link, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { diskFullOf } from '../disk-full.ts';
import { ArchiveError, ConfigError } from '../errors.ts';
import { readManifest, verifyArchive, type ArchiveFile } from './archive-manifest.ts';
import { sqlString } from './comments.ts';
import { Database } from './database.ts';
import { syncDirectory } from './publish.ts';

/** What a restore did. */
export interface RestoreResult {
  /** The new database. */
  db: string;
  /** The archive run restored (its id and time). */
  archiveId: string;
  archivedAt: string;
  /** Rows per table restored, the raw ones first (raw.<stream>, meta.cursors, …), and per account for the raw ones. */
  tables: { table: string; rows: number; accounts: Record<string, number> }[];
  /** Files read (each checked against its SHA-256 first). */
  files: number;
}

/** Callbacks of a restore. */
export interface RestoreHooks {
  /** Told as each file's checksum is verified. */
  onVerified?: (file: ArchiveFile, index: number, total: number) => void;
}

/**
 * Builds a new database at `target` from the archive in `dir`: checks every file the manifest
 * lists against its SHA-256 before writing anything, then writes a temporary database beside the
 * target (created by `prepare`: the raw tables as the streams declare them), fills every archived
 * table, checks each table's rows against the manifest, checkpoints, and links it into place
 * (never over an existing file). Killed at any instant, it leaves no database at `target`.
 *
 * The caller holds the target's lock (a second restore into the same name waits), and has checked
 * that `target` does not exist.
 * @throws ConfigError when `dir` holds no archive; ArchiveError naming a file missing or corrupted.
 */
export async function restoreArchive(dir: string, target: string, prepare: (db: Database) => Promise<void>, options: { memoryLimit?: string } & RestoreHooks = {}): Promise<RestoreResult> {
  const manifest = readManifest(dir);
  if (manifest === null || manifest.archiveId === '') {
    throw new ConfigError('--from', `${dir} holds no archive (no ${path.join(dir, 'manifest.json')} of a finished exledger archive)`, { hint: 'give the folder archive.dir names (where exledger run or exledger archive writes)' });
  }
  await verifyArchive(dir, manifest.files, (file, index) => options.onVerified?.(file, index + 1, manifest.files.length));

  const folder = path.dirname(target);
  const prefix = `.${path.basename(target)}.restore-tmp-`;
  // Under the target's lock, a temporary database there is one a killed restore left.
  for (const name of await readdir(folder)) if (name.startsWith(prefix)) await rm(path.join(folder, name), { force: true });
  const temporary = path.join(folder, `${prefix}${process.pid}`);
  try {
    const db = await Database.open(temporary, { memoryLimit: options.memoryLimit });
    const tables: RestoreResult['tables'] = [];
    try {
      await prepare(db);
      await db.transaction(async () => {
        // The change log starts after the archive's high-water mark: archiving this database into
        // the same folder later reads its changes as new, never as already archived.
        await db.run(`DROP SEQUENCE IF EXISTS meta.raw_change_seq; CREATE SEQUENCE meta.raw_change_seq START WITH ${BigInt(manifest.rawChangeSeq) + 1n}`);
        for (const [name, table] of Object.entries(manifest.tables).sort(([a], [b]) => order(a) - order(b) || a.localeCompare(b, 'en'))) {
          const [schema, tableName] = name.split('.') as [string, string];
          const columns = table.columns.map((column) => `"${column.name}"`).join(', ');
          await db.run(`CREATE SCHEMA IF NOT EXISTS "${schema}"; CREATE TABLE IF NOT EXISTS "${schema}"."${tableName}" (${table.columns.map((column) => `"${column.name}" ${column.type}`).join(', ')})`);
          const files = manifest.files.filter((file) => file.table === name);
          if (files.length > 0) {
            const list = files.map((file) => sqlString(path.join(dir, ...file.path.split('/')))).join(', ');
            await db.run(
              `INSERT INTO "${schema}"."${tableName}" (${columns})
               SELECT ${table.columns.map((column) => `CAST("${column.name}" AS ${column.type})`).join(', ')} FROM read_parquet([${list}], hive_partitioning = false, union_by_name = true)`,
            );
          }
          const [{ n }] = (await db.all<{ n: string }>(`SELECT count(*) AS n FROM "${schema}"."${tableName}"`)) as [{ n: string }];
          if (Number(n) !== table.rows) {
            throw new ArchiveError(path.join(dir, 'manifest.json'), `lists ${table.rows} rows of ${name}, but its files hold ${n}: the archive does not agree with itself`, { hint: 'archive again from the database the archive was made of; nothing was written' });
          }
          const accounts: Record<string, number> = {};
          if (schema === 'raw') for (const file of files) accounts[file.account ?? ''] = (accounts[file.account ?? ''] ?? 0) + file.rows;
          tables.push({ table: name, rows: Number(n), accounts });
        }
      });
      await db.checkpoint();
    } finally {
      db.close();
    }
    // The new database appears whole or not at all, and never replaces a file that appeared meanwhile (link fails on EEXIST).
    await link(temporary, target);
    await rm(temporary, { force: true });
    await syncDirectory(folder);
    return { db: target, archiveId: manifest.archiveId, archivedAt: manifest.archivedAt, tables, files: manifest.files.length };
  } catch (error) {
    await rm(temporary, { force: true });
    await rm(`${temporary}.wal`, { force: true });
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new ConfigError(target, 'appeared while the restore ran: restore never replaces a database', { hint: 'give --db a new file name; nothing was written' });
    throw diskFullOf(error, { file: target, doing: 'restoring the archive', kept: 'no database was written (the temporary one is removed)' }) ?? error;
  }
}

/** Raw tables first, then meta, settings, closed. */
function order(name: string): number {
  return ['raw', 'meta', 'settings', 'closed'].indexOf(name.split('.')[0]!);
}


/** Whether a database (or its write-ahead log) is at `file`. */
export function databaseExists(file: string): boolean {
  return existsSync(file) || existsSync(`${file}.wal`);
}
