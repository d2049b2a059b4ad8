/**
 * Killed nights (issue 12): `exledger run` as cron starts it (its own process, no terminal) against
 * `exledger sandbox` in another process, SIGKILLed at random instants of every step (sync, build,
 * check, reports, publish), one night after another on one database; then one honest night. Its
 * data must equal a clean run's: every raw record, the latest snapshots, every mart row (columns
 * about snapshot times aside: those are when each database looked), the workbooks, and no
 * leftover temporary file. Prints a line per killed night and the comparison.
 *
 *   npm run bench -- run-kill [nights]    (default 15: each step three times)
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Database } from '../src/store/database.ts';
import { runCli, startCli } from '../test/support/cli-process.ts';
import { startSandboxProcess } from '../test/support/sandbox-process.ts';
import { table } from './sync.ts';

const CONFIG = {
  budget: { spot: { quota: 500, windowMs: 1000 }, contract: { quota: 1000, windowMs: 1000 } },
  retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 },
  sync: { startDate: '2026-08-01' },
  db: './data/ledger.duckdb',
  reports: { outDir: './out' },
  logDir: './logs',
};

interface Night {
  dir: string;
  env: Record<string, string>;
}

function createNight(settings: Record<string, string>): Night {
  const dir = mkdtempSync(path.join(tmpdir(), 'exledger-run-kill-'));
  mkdirSync(path.join(dir, 'data'));
  writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify(CONFIG));
  return { dir, env: settings };
}

/** A fingerprint of the data a night leaves: one hash per table, and the files beside it. */
async function fingerprint(night: Night): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const db = await Database.open(path.join(night.dir, 'data', 'ledger.duckdb'), { readOnly: true });
  try {
    const tables = await db.all<{ schema: string; name: string }>(
      "SELECT table_schema AS schema, table_name AS name FROM information_schema.tables WHERE table_schema IN ('raw', 'marts') ORDER BY ALL",
    );
    for (const { schema, name } of tables) {
      const columns = await db.all<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = '${schema}' AND table_name = '${name}' ORDER BY ordinal_position`,
      );
      let select: string;
      if (schema === 'raw') {
        // History: every record; snapshots: the latest one's records (taken when each database looked).
        const snapshot = columns.some((column) => column.column_name === '_snapshot_at');
        select = snapshot
          ? `SELECT _account, _partition, _record::VARCHAR AS r FROM raw.${name} WHERE _seq >= 0 AND _snapshot_at = (SELECT max(_snapshot_at) FROM raw.${name})`
          : `SELECT _account, _partition, _key, _event_ms, _record::VARCHAR AS r FROM raw.${name}`;
      } else {
        const kept = columns.map((column) => column.column_name).filter((column) => !column.includes('snapshot'));
        select = `SELECT ${kept.map((column) => `"${column}"`).join(', ')} FROM marts.${name}`;
      }
      const [row] = await db.all<{ n: string; h: string | null }>(`SELECT count(*)::VARCHAR AS n, md5(string_agg(t::VARCHAR, '|' ORDER BY t::VARCHAR)) AS h FROM (${select}) t`);
      out.set(`${schema}.${name}`, `${row!.n} rows ${row!.h ?? '-'}`);
    }
  } finally {
    db.close();
  }
  for (const folder of ['out', 'data']) out.set(`files in ${folder}/`, readdirSync(path.join(night.dir, folder)).sort().join(' '));
  return out;
}

/** The steps of a run and how long each took here, about: a kill lands within that after it starts. */
const STEPS: readonly (readonly [string, number])[] = [
  ['sync', 4000],
  ['build', 2000],
  ['check', 800],
  ['reports', 2000],
  ['publish', 300],
];

/** The step a killed run was in: the last `== step` line it printed. */
function stepOf(stdout: string): string {
  const steps = [...stdout.matchAll(/== (\w+)/g)].map((match) => match[1]);
  return steps.at(-1) ?? 'starting';
}

export async function benchRunKill(nights = 15): Promise<void> {
  const exchange = await startSandboxProcess(['--end', '2026-11-01', '--window-ms', '1000', '--spot-quota', '500', '--futures-quota', '1000']);
  const clean = createNight(exchange.settings);
  const killed = createNight(exchange.settings);
  try {
    const started = Date.now();
    const first = await runCli(['run'], { cwd: clean.dir, env: clean.env });
    const cleanSeconds = (Date.now() - started) / 1000;
    if (first.code !== 0) throw new Error(`the clean run ended ${first.code}: ${first.stderr}`);
    console.log(`clean run: exit 0 in ${cleanSeconds.toFixed(1)} s; load average ${loadavg()[0]!.toFixed(2)}`);

    const rows: (string | number)[][] = [];
    for (let index = 0; index < nights; index += 1) {
      // Every step in turn: killed at a random instant after it starts (within about its length).
      const [step, withinMs] = STEPS[index % STEPS.length]!;
      const afterMs = Math.round(Math.random() * withinMs);
      const run = startCli(['run'], { cwd: killed.dir, env: killed.env });
      let stdout = '';
      let timer: NodeJS.Timeout | undefined;
      run.child.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (timer === undefined && stdout.includes(`== ${step}`)) timer = setTimeout(() => run.child.kill('SIGKILL'), afterMs);
      });
      const result = await run.done;
      clearTimeout(timer);
      rows.push([index + 1, step, `${afterMs} ms`, result.signal === 'SIGKILL' ? `killed in ${stepOf(result.stdout)}` : `ended (exit ${result.code})`]);
    }
    table('killed nights on one database (SIGKILL at a random instant of a step)', ['night', 'step aimed at', 'after it started', 'outcome'], rows);

    const honest = await runCli(['run'], { cwd: killed.dir, env: killed.env });
    console.log(`\nhonest night: exit ${honest.code}`);
    const expected = await fingerprint(clean);
    const actual = await fingerprint(killed);
    const names = [...new Set([...expected.keys(), ...actual.keys()])].sort();
    const differing = names.filter((name) => expected.get(name) !== actual.get(name));
    table(
      'honest night after the kills vs a clean run',
      ['table or folder', 'clean', 'after kills', 'equal'],
      names.map((name) => [name, expected.get(name) ?? '(none)', actual.get(name) ?? '(none)', differing.includes(name) ? 'NO' : 'yes']),
    );
    console.log(`\n${differing.length === 0 && honest.code === 0 ? 'same data as a clean run' : `DIFFERENT: ${differing.join(', ')}`} (load average ${loadavg()[0]!.toFixed(2)})`);
  } finally {
    await exchange.stop();
    rmSync(clean.dir, { recursive: true, force: true });
    rmSync(killed.dir, { recursive: true, force: true });
  }
}
