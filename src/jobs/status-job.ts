import type { Config } from '../config/config.ts';
import type { StreamDeclaration } from '../extract/stream.ts';
import { Database } from '../store/database.ts';
import { readStatus, type StreamStatus } from '../store/stream-status.ts';
import { requireDatabase } from './paths.ts';

/** The status job: per account and stream, what is stored and how far it is synced (read-only). */
export async function statusJob(config: Readonly<Config>, streams: readonly StreamDeclaration[]): Promise<StreamStatus[]> {
  requireDatabase(config.db);
  const db = await Database.open(config.db, { readOnly: true });
  try {
    return await readStatus(db, streams);
  } finally {
    db.close();
  }
}
