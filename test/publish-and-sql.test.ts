import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../src/store/database.ts';
import { publishDatabase, publishedPath } from '../src/store/publish.ts';
import { runCli } from './support/cli-process.ts';
import { startAnalyst } from './support/analyst-process.ts';

/** Which version wrote every row of marts.later (null if they disagree), and how many rows. */
const LATER = "SELECT CASE WHEN bool_and(digest = md5(n::VARCHAR || '-1')) THEN 1 WHEN bool_and(digest = md5(n::VARCHAR || '-2')) THEN 2 END AS v, count(*)::INTEGER AS n FROM marts.later";

/** Exact values that a binary float would change: 38 significant digits, and 2^63 - 1. */
const AMOUNT = '123456789012345678.123456789012345678';
const TRADE_ID = '9223372036854775807';

let dir: string;
let source: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-publish-'));
  source = path.join(dir, 'exledger.duckdb');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Writes the source database anew, `version` in every row. Anew, not updated: an updated file
 * keeps the blocks of the tables it replaced, so a reader left on old metadata would still find
 * the old rows in it, and a publish that overwrote the published file in place would go unseen.
 */
async function writeSource(version: number): Promise<void> {
  rmSync(source, { force: true });
  const db = await Database.open(source);
  try {
    await db.run(`
      CREATE SCHEMA marts;
      CREATE TABLE marts.trades (trade_id BIGINT, id VARCHAR, amount DECIMAL(38,18), note VARCHAR, version INTEGER);
      INSERT INTO marts.trades VALUES
        (${TRADE_ID}, '${TRADE_ID}', ${AMOUNT}, 'plain', ${version}),
        (-1, '1', -0.5, 'a, "quoted"' || chr(10) || 'line', ${version}),
        (7, '7', NULL, '', ${version});
      -- Enough rows that the file has many blocks, not only its header.
      CREATE TABLE marts.filler AS SELECT range AS n, ${version} AS version FROM range(200000);
      -- Read by a held connection only after a publish: from the file, not from DuckDB's cache.
      CREATE TABLE marts.later AS SELECT range AS n, md5(range::VARCHAR || '-' || ${version}) AS digest FROM range(200000);
    `);
  } finally {
    db.close();
  }
}

async function rowsOf(file: string, sql: string, readOnly = true): Promise<Record<string, unknown>[]> {
  const db = await Database.open(file, { readOnly });
  try {
    return await db.all(sql);
  } finally {
    db.close();
  }
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** Runs the `exledger` executable in a child process, as a scheduler would (no terminal, stdin closed). */
async function cli(args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await runCli(args, { input });
  return { code, stdout, stderr };
}

describe('publishedPath', () => {
  it('puts .published before .duckdb, in the same folder', () => {
    expect(publishedPath('./data/exledger.duckdb')).toBe('./data/exledger.published.duckdb');
    expect(publishedPath('/var/lib/x/main.duckdb')).toBe('/var/lib/x/main.published.duckdb');
    expect(publishedPath('./data/ledger.db')).toBe('./data/ledger.db.published.duckdb');
    expect(publishedPath('ledger')).toBe('ledger.published.duckdb');
  });
});

describe('publishDatabase', () => {
  it('makes the copy read-only and no more readable than the database: 0400 beside a database made under umask 077', async () => {
    await writeSource(1);
    chmodSync(source, 0o600);
    const result = await publishDatabase(source);
    expect(statSync(result.path).mode & 0o777).toBe(0o400);
  });

  it('publishes a read-only copy equal to the source, checkpointed, with no temporary file left', async () => {
    await writeSource(1);
    const result = await publishDatabase(source);

    expect(result.path).toBe(path.join(dir, 'exledger.published.duckdb'));
    expect(result.bytes).toBe(statSync(result.path).size);
    expect(result.ms).toBeGreaterThan(0);
    expect(statSync(result.path).mode & 0o777).toBe(0o444);
    // The database, the published copy and the slot it is a hard link to (the first of the two
    // copies kept, docs/plans/incremental-publish.md): no WAL beside any, no temporary copy.
    expect(readdirSync(dir).sort()).toEqual(['.exledger.published.duckdb.a', 'exledger.duckdb', 'exledger.published.duckdb']);
    expect(statSync(result.path).ino).toBe(statSync(path.join(dir, '.exledger.published.duckdb.a')).ino);
    expect(result).toMatchObject({ how: 'full', why: 'the first publish: no copy to bring up to date yet' });
    // The checkpointed source and its copy are the same bytes.
    expect(sha256(result.path)).toBe(sha256(source));

    const query = 'SELECT trade_id, id, amount, note, version FROM marts.trades ORDER BY id';
    const published = await rowsOf(result.path, query);
    expect(published).toEqual(await rowsOf(source, query));
    expect(published[2]).toEqual({ trade_id: TRADE_ID, id: TRADE_ID, amount: AMOUNT, note: 'plain', version: 1 });
    expect(await rowsOf(result.path, 'SELECT count(*)::INTEGER AS n, min(version) AS v FROM marts.filler')).toEqual([{ n: 200000, v: 1 }]);
  });

  it('refuses a database that does not exist, and creates nothing', async () => {
    await expect(publishDatabase(source)).rejects.toThrow(/no database here to publish/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('removes the temporary copy of a publish that was killed', async () => {
    await writeSource(1);
    const leftover = path.join(dir, '.exledger.published.duckdb.tmp-999999-1');
    writeFileSync(leftover, 'half a copy');
    await publishDatabase(source);
    expect(readdirSync(dir).sort()).toEqual(['.exledger.published.duckdb.a', 'exledger.duckdb', 'exledger.published.duckdb']);
  });

  it('publishes while an analyst in this process holds the published copy open: the analyst keeps the old data, a new open sees the new', async () => {
    await writeSource(1);
    const { path: published } = await publishDatabase(source);

    // An analyst's client, opened the way one would (DuckDB directly, read-only).
    const analyst = await DuckDBInstance.create(published, { access_mode: 'READ_ONLY' });
    const connection = await analyst.connect();
    const read = async () => (await connection.runAndReadAll('SELECT min(version) AS v, max(version) AS w, count(*)::INTEGER AS n FROM marts.filler')).getRowObjectsJson();
    try {
      expect(await read()).toEqual([{ v: 1, w: 1, n: 200000 }]);

      await writeSource(2);
      await publishDatabase(source);

      // The held connection reads the file it opened (the old inode), whole and unchanged,
      // including blocks it had never read before the swap.
      expect(await read()).toEqual([{ v: 1, w: 1, n: 200000 }]);
      expect((await connection.runAndReadAll(LATER)).getRowObjectsJson()).toEqual([{ v: 1, n: 200000 }]);
      expect((await connection.runAndReadAll('SELECT amount FROM marts.trades WHERE id = $1', [TRADE_ID])).getRowObjectsJson()).toEqual([{ amount: AMOUNT }]);
      // A new open sees the new copy.
      expect(await rowsOf(published, 'SELECT min(version) AS v, max(version) AS w FROM marts.filler')).toEqual([{ v: 2, w: 2 }]);
      // The two copies: the analyst's (a) and the new one (b), published.
      expect(readdirSync(dir).sort()).toEqual(['.exledger.published.duckdb.a', '.exledger.published.duckdb.b', 'exledger.duckdb', 'exledger.published.duckdb']);
      expect(statSync(published).ino).toBe(statSync(path.join(dir, '.exledger.published.duckdb.b')).ino);
    } finally {
      connection.closeSync();
      analyst.closeSync();
    }
  });

  it('publishes while an analyst in another process holds the published copy open', async () => {
    // DuckDB's file locks are POSIX record locks, which never conflict inside one process: only
    // another process shows that publishing takes no lock the analyst holds.
    await writeSource(1);
    const { path: published } = await publishDatabase(source);
    const analyst = startAnalyst(published);
    try {
      await analyst.ready;
      expect(await analyst.query('SELECT min(version) AS v, count(*)::INTEGER AS n FROM marts.filler')).toEqual([{ v: 1, n: 200000 }]);

      await writeSource(2);
      const result = await publishDatabase(source);
      expect(result.path).toBe(published);

      // Blocks it had never read before the swap, from the old file.
      expect(await analyst.query(LATER)).toEqual([{ v: 1, n: 200000 }]);
      expect(await rowsOf(published, 'SELECT min(version) AS v FROM marts.filler')).toEqual([{ v: 2 }]);
    } finally {
      await analyst.quit();
    }
  });
});


describe('exledger sql', () => {
  const QUERY = 'SELECT trade_id, id, amount, note FROM marts.trades ORDER BY trade_id DESC';

  it('prints a table, CSV and JSON from the published copy, exact DECIMAL(38,18) and 64-bit ids unchanged', async () => {
    await writeSource(1);
    await publishDatabase(source);
    // Changed after publishing: exledger sql reads the published copy, not the database.
    await writeSource(2);

    const table = await cli(['sql', 'SELECT version, trade_id, id, amount, note FROM marts.trades ORDER BY trade_id DESC', '--db', source]);
    expect(table).toMatchObject({ code: 0, stderr: '' });
    // Numbers right-aligned, text left; NULL shown as NULL, the empty string as nothing; a
    // line break in text shown as \n so each row stays one line.
    expect(table.stdout).toBe(
      [
        'version             trade_id  id                                                  amount  note',
        '-------  -------------------  -------------------  -------------------------------------  -----------------',
        `      1  ${TRADE_ID}  ${TRADE_ID}  ${AMOUNT}  plain`,
        `      1                    7  7                                                     NULL`,
        `      1                   -1  1                                    -0.500000000000000000  a, "quoted"\\nline`,
        '3 rows',
        '',
      ].join('\n'),
    );

    // With --config naming the database, as an analyst's config file would.
    const config = path.join(dir, 'exledger.config.json');
    writeFileSync(config, JSON.stringify({ db: source }));
    const csv = await cli(['sql', QUERY, '--csv', '--config', config]);
    expect(csv).toMatchObject({ code: 0, stderr: '' });
    expect(csv.stdout).toBe(`trade_id,id,amount,note\r\n${TRADE_ID},${TRADE_ID},${AMOUNT},plain\r\n7,7,,""\r\n-1,1,-0.500000000000000000,"a, ""quoted""\nline"\r\n`);

    const json = await cli(['sql', QUERY, '--json', '--db', source]);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    // The one --json shape of every command; the rows are its details.
    const parsed = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(parsed).toMatchObject({ command: 'sql', ok: true, exitCode: 0, columns: ['trade_id', 'id', 'amount', 'note'] });
    expect(parsed.startedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(parsed.rows).toEqual([
      { trade_id: TRADE_ID, id: TRADE_ID, amount: AMOUNT, note: 'plain' },
      { trade_id: '7', id: '7', amount: null, note: '' },
      { trade_id: '-1', id: '1', amount: '-0.500000000000000000', note: 'a, "quoted"\nline' },
    ]);
    // In the text itself, not only after parsing: exact strings, never JSON numbers.
    expect(json.stdout).toContain(`"trade_id": "${TRADE_ID}",`);
    expect(json.stdout).toContain(`"amount": "${AMOUNT}",`);
  });

  it('--csv: text a spreadsheet would evaluate gets a leading quote, numbers never; --raw gives it exactly as stored', async () => {
    await writeSource(1);
    await publishDatabase(source);
    // Exchange text is not ours: a symbol or a note may begin with = + - @ (or a tab).
    const query = `SELECT * FROM (VALUES (1, '=HYPERLINK("http://x","y")', -0.5::DECIMAL(38,18)), (2, '-2+3', -1::DECIMAL(38,18)), (3, '@SUM(A1)', 0::DECIMAL(38,18)), (4, '+1', 1::DECIMAL(38,18)), (5, chr(9) || 'tab', NULL), (6, 'BTC-USDT', 2::DECIMAL(38,18))) AS t(n, note, amount) ORDER BY n`;
    const neutral = await cli(['sql', query, '--csv', '--db', source]);
    expect(neutral).toMatchObject({ code: 0, stderr: '' });
    expect(neutral.stdout.split('\r\n')).toEqual([
      'n,note,amount',
      `1,"'=HYPERLINK(""http://x"",""y"")",-0.500000000000000000`,
      "2,'-2+3,-1.000000000000000000",
      "3,'@SUM(A1),0.000000000000000000",
      "4,'+1,1.000000000000000000",
      "5,'\ttab,",
      '6,BTC-USDT,2.000000000000000000',
      '',
    ]);
    const raw = await cli(['sql', query, '--csv', '--raw', '--db', source]);
    expect(raw.stdout.split('\r\n').slice(1, 3)).toEqual([`1,"=HYPERLINK(""http://x"",""y"")",-0.500000000000000000`, '2,-2+3,-1.000000000000000000']);
  });

  it('runs several statements and prints the last; a temporary table is allowed', async () => {
    await writeSource(1);
    await publishDatabase(source);
    const result = await cli(['sql', 'CREATE TEMP TABLE picked AS SELECT amount FROM marts.trades WHERE id = \'1\'; SELECT amount * 2 AS doubled FROM picked', '--json', '--db', source]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect((JSON.parse(result.stdout) as { rows: unknown }).rows).toEqual([{ doubled: '-1.000000000000000000' }]);
  });

  it('before any publish: one error line naming the published file and the fix, exit 2', async () => {
    await writeSource(1);
    const result = await cli(['sql', 'SELECT 1', '--db', source]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`error: ${path.join(dir, 'exledger.published.duckdb')}: no published copy of the database here\n  fix: run \`exledger run\` first, which publishes it\n`);
  });

  it('refuses a write with DuckDB read-only error on one line, exit 1, and the published file is unchanged', async () => {
    await writeSource(1);
    const { path: published } = await publishDatabase(source);
    const before = { hash: sha256(published), mtime: statSync(published).mtimeMs };

    for (const statement of ['CREATE TABLE marts.mine (a INTEGER)', 'DELETE FROM marts.trades', "UPDATE marts.trades SET note = 'x'"]) {
      const result = await cli(['sql', statement, '--db', source]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      const [line, fix, ...rest] = result.stderr.split('\n');
      expect(line).toMatch(/^error: the published copy is read-only: Invalid Input Error: Cannot execute statement of type "(CREATE|DELETE|UPDATE)" .* read-only mode!$/);
      expect(fix).toMatch(/^ {2}fix: /);
      expect(rest).toEqual(['']);
    }

    expect({ hash: sha256(published), mtime: statSync(published).mtimeMs }).toEqual(before);
    expect(existsSync(`${published}.wal`)).toBe(false);
    expect(await rowsOf(published, 'SELECT count(*)::INTEGER AS n FROM marts.trades')).toEqual([{ n: 3 }]);
  });

  it('a syntax error or an unknown table: one line with DuckDB message, exit 1', async () => {
    await writeSource(1);
    await publishDatabase(source);

    const syntax = await cli(['sql', 'SELEC 1', '--db', source]);
    expect(syntax).toEqual({ code: 1, stdout: '', stderr: 'error: Parser Error: syntax error at or near "SELEC"\n' });

    const unknown = await cli(['sql', 'SELECT * FROM marts.nope', '--db', source]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: Catalog Error: Table with name nope does not exist![^\n]*\n$/);
  });
});
