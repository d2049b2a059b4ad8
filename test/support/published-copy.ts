import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Database } from '../../src/store/database.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * Everything that differs between a database and a copy of it: catalog entries only in one
 * (schemas, tables as created, columns and their types, views, macros, sequences with the next
 * value each gives, indexes, each with its comment), and, for every table of every schema, the
 * rows only in one (EXCEPT ALL both ways, every column, so duplicates count). Empty when the
 * copy holds the same as the database.
 */
export async function copyDifferences(database: string, copy: string): Promise<string[]> {
  const db = await Database.open(':memory:', { bookkeeping: false });
  try {
    await db.run(`ATTACH '${database.replace(/'/g, "''")}' AS a (READ_ONLY); ATTACH '${copy.replace(/'/g, "''")}' AS b (READ_ONLY)`);
    const both = "database_name IN ('a', 'b')";
    const comment = "coalesce(' -- ' || comment, '')";
    const catalog = await db.all<{ side: string; line: string }>(`
      WITH lines AS (
        SELECT database_name AS db, 'schema ' || schema_name || ${comment} AS line FROM duckdb_schemas() WHERE ${both}
        UNION ALL SELECT database_name, 'table ' || schema_name || '.' || table_name || ': ' || sql || ${comment} FROM duckdb_tables() WHERE ${both}
        UNION ALL SELECT database_name, 'column ' || schema_name || '.' || table_name || '.' || column_name || ' ' || data_type || ${comment} FROM duckdb_columns() WHERE ${both}
        UNION ALL SELECT database_name, 'view ' || schema_name || '.' || view_name || ': ' || sql FROM duckdb_views() WHERE ${both} AND NOT internal
        UNION ALL SELECT database_name, 'macro ' || schema_name || '.' || function_name || ': ' || coalesce(macro_definition, '') FROM duckdb_functions() WHERE ${both} AND function_type IN ('macro', 'table_macro')
        UNION ALL SELECT database_name, 'sequence ' || schema_name || '.' || sequence_name || ' next ' || coalesce(last_value + increment_by, start_value) FROM duckdb_sequences() WHERE ${both}
        UNION ALL SELECT database_name, 'index ' || schema_name || '.' || index_name || ': ' || coalesce(sql, '') FROM duckdb_indexes() WHERE ${both}
      )
      SELECT 'only in the database' AS side, line FROM (SELECT line FROM lines WHERE db = 'a' EXCEPT ALL SELECT line FROM lines WHERE db = 'b')
      UNION ALL SELECT 'only in the copy', line FROM (SELECT line FROM lines WHERE db = 'b' EXCEPT ALL SELECT line FROM lines WHERE db = 'a')
      ORDER BY ALL`);
    const differences = catalog.map((row) => `${row.side}: ${row.line}`);
    const tables = await db.all<{ id: string }>(`SELECT '"' || schema_name || '"."' || table_name || '"' AS id FROM duckdb_tables() WHERE database_name = 'a' ORDER BY id`);
    for (const { id } of tables) {
      const [row] = await db.all<{ only_a: string; only_b: string }>(
        `SELECT (SELECT count(*) FROM (FROM a.${id} EXCEPT ALL FROM b.${id})) AS only_a, (SELECT count(*) FROM (FROM b.${id} EXCEPT ALL FROM a.${id})) AS only_b`,
      ).catch((error: unknown) => [{ only_a: `error: ${(error as Error).message.split('\n')[0]}`, only_b: '' }]);
      if (row!.only_a !== '0' || row!.only_b !== '0') differences.push(`${id}: ${row!.only_a} rows only in the database, ${row!.only_b} only in the copy`);
    }
    return differences;
  } finally {
    db.close();
  }
}

/** How a publish in a process of its own ended: its result line (JSON) when it finished, else how it was stopped. */
export interface PublishProcessRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The publish's result, when it finished. */
  result?: { how: 'incremental' | 'full'; why?: string; path: string };
  stderr: string;
  /** Milliseconds from the publish's start (its `publishing` line) to the process's exit; undefined when it never started. */
  publishMs?: number;
}

/**
 * Publishes `db` in a process of its own (test/support/publish-process-main.ts: publishDatabase
 * with the project's placements, as the run's publish step), killed with SIGKILL `killAfterMs`
 * after the publish itself starts (the process says so once its modules are loaded), if it has not
 * ended by then; `child` to kill it at another moment.
 */
export function startPublishProcess(db: string, killAfterMs?: number): { child: ChildProcess; done: Promise<PublishProcessRun> } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'publish-process-main.ts'), db], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let timer: NodeJS.Timeout | undefined;
  let startedAt: number | undefined;
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (startedAt === undefined && stdout.startsWith('publishing\n')) {
      startedAt = performance.now();
      if (killAfterMs !== undefined) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<PublishProcessRun>((resolve) => {
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').at(-1);
      const publishMs = startedAt === undefined ? undefined : performance.now() - startedAt;
      resolve({ code, signal, stderr, publishMs, ...(code === 0 && line !== undefined && line.startsWith('{') ? { result: JSON.parse(line) as PublishProcessRun['result'] } : {}) });
    });
  });
  return { child, done };
}
