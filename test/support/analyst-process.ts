import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** An analyst's DuckDB session in a process of its own, holding a database file open read-only. */
export interface AnalystProcess {
  child: ChildProcessWithoutNullStreams;
  /** Resolves once the file is open. */
  ready: Promise<void>;
  /** Runs a query on the held connection; its rows as JSON values (DECIMAL, BIGINT as strings). */
  query: (sql: string) => Promise<unknown>;
  /** Closes the connection and waits for the process; its exit code. */
  quit: () => Promise<number | null>;
}

/**
 * Starts a separate Node process that opens `file` read-only with DuckDB and keeps it open,
 * running each query it is sent. DuckDB's file locks are POSIX record locks, which never
 * conflict inside one process: only another process shows what an analyst's client would.
 */
export function startAnalyst(file: string): AnalystProcess {
  const script = `
    import { DuckDBInstance } from '@duckdb/node-api';
    import { createInterface } from 'node:readline';
    const instance = await DuckDBInstance.create(process.argv[1], { access_mode: 'READ_ONLY' });
    const connection = await instance.connect();
    console.log(JSON.stringify('ready'));
    for await (const sql of createInterface({ input: process.stdin })) {
      console.log(JSON.stringify((await connection.runAndReadAll(sql)).getRowObjectsJson()));
    }
    connection.closeSync();
    instance.closeSync();
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, file], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const next = async () => {
    const line = await lines.next();
    if (line.done === true) throw new Error(`the analyst process ended: ${stderr}`);
    return JSON.parse(line.value) as unknown;
  };
  const ready = next().then((said) => {
    if (said !== 'ready') throw new Error(`the analyst said ${JSON.stringify(said)}`);
  });
  const query = async (sql: string) => {
    child.stdin.write(`${sql}\n`);
    return next();
  };
  const quit = () => {
    child.stdin.end();
    return exited;
  };
  return { child, ready, query, quit };
}
