/**
 * Benchmark of the publish step (issue 28, item 1; docs/plans/incremental-publish.md): the whole
 * copy of the database beside the incremental publish after one more day, on a build benchmark's
 * history (bench/build-data.ts).
 *
 *   npm run bench -- publish-1m                       1M spot fills, the default cost methods
 *   npm run bench -- publish-1m fifo average lifo hifo uk   the same with those cost methods
 *   npm run bench -- publish-300k                     300k spot fills (beside 1M: what grows with the history)
 *
 * Steps, on a fresh copy of the generated raw history: `exledger build` (a child process, not
 * measured); two publishes, which make the two copies (each a whole copy of the file: today's
 * publish, measured); the day appended (bench/nightly-day.ts) and `exledger build` again
 * (incremental, not measured); then the night's publish (measured, three times from the same
 * state), a whole copy of the same file (measured: the standby held open by an analyst process, as
 * a night where the incremental way cannot be used), and the published copy compared with the
 * database table by table, row for row (EXCEPT ALL both ways; not measured).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, linkSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { modelPlacements } from '../src/jobs/publish-job.ts';
import { Database } from '../src/store/database.ts';
import { publishDatabase, publishedPath, publishedSlots, type PublishResult } from '../src/store/publish.ts';
import { startAnalyst } from '../test/support/analyst-process.ts';
import { sqlString } from '../src/store/comments.ts';
import { BENCH_DATA_DIR, cachedBuildData, copyBuildData, type BuildDataSpec } from './build-data.ts';
import { runBuild } from './build.ts';
import { removePublishedCopies, withDatabase } from './cached-database.ts';
import { appendNightlyDay } from './nightly-day.ts';

/** The build benchmark's history (bench/build.ts build-1m), with `spotFills` spot fills. */
const specOf = (spotFills: number): BuildDataSpec => ({ spotFills, futuresFills: 1_000_000, fundingBills: 100_000 });
const BUILD_TIMEOUT_SECONDS = 1200;
const REPEATS = 3;

/**
 * Runs the publish benchmark on a history of `spotFills` spot fills (and the build benchmark's
 * futures fills and bills), the build made with `costMethods` (none: the configured default).
 */
export async function benchPublish(spotFills: number, costMethods: readonly string[] = []): Promise<void> {
  const flags = costMethods.length === 0 ? [] : ['--cost-method', ...costMethods];
  const data = await cachedBuildData(specOf(spotFills));
  const work = path.join(BENCH_DATA_DIR, 'run-publish.duckdb');
  copyBuildData(data.path, work);
  removePublishedCopies(work);
  console.log(`\n== publish: a whole copy vs the incremental publish after one more day (${spotFills.toLocaleString('en-US')} spot fills${flags.length === 0 ? '' : `, ${flags.join(' ')}`})`);

  const built = await runBuild(work, flags, BUILD_TIMEOUT_SECONDS);
  if (built.exitCode !== 0) throw new Error(`exledger build failed (exit ${built.exitCode ?? 'killed'}):\n${built.stderrTail}`);
  console.log(`build (whole, not measured): ${built.wallSeconds.toFixed(1)} s`);

  const placements = modelPlacements();
  const rows: Record<string, string>[] = [];
  const phases: Record<string, string>[] = [];
  const measure = async (what: string, before?: () => Promise<() => Promise<void>>): Promise<PublishResult> => {
    const after = await before?.();
    // Every file written before (the build's, the copies put back) on the disk first: a night's
    // standby was written two nights ago, and the fsyncs of the publish would otherwise flush
    // them too (ext4 orders a journal commit after the data of every file it allocated blocks for).
    execFileSync('sync');
    const load = loadavg()[0]!;
    const result = await publishDatabase(work, { placements });
    await after?.();
    rows.push({
      publish: what,
      how: result.how === 'full' ? `full copy (${result.why})` : `incremental: ${result.tables!.changed} of ${result.tables!.of} tables, ${result.tables!.rows.toLocaleString('en-US')} rows`,
      's': (result.ms / 1000).toFixed(2),
      'database MB': (statSync(work).size / 1e6).toFixed(1),
      'copy MB': (result.bytes / 1e6).toFixed(1),
      'load at start': `${load.toFixed(1)} / ${cpus().length} cores`,
    });
    phases.push({ publish: what, ...Object.fromEntries(Object.entries(result.phases).map(([name, ms]) => [name, (ms / 1000).toFixed(2)])) });
    return result;
  };
  await measure('first (after the build)');
  await measure('second (the other copy)');

  const added = await withDatabase(work, appendNightlyDay);
  console.log(`appended ${added.spotFills.toLocaleString('en-US')} spot and ${added.futuresFills.toLocaleString('en-US')} futures fills (one day) and ${added.snapshots} futures account snapshot(s)`);
  const nightly = await runBuild(work, flags, BUILD_TIMEOUT_SECONDS);
  if (nightly.exitCode !== 0) throw new Error(`the nightly build failed (exit ${nightly.exitCode ?? 'killed'}):\n${nightly.stderrTail}`);
  console.log(`build (incremental, not measured): ${nightly.wallSeconds.toFixed(1)} s`);
  // The night's publish, REPEATS times from the same state (the database and both copies put back
  // each time), so that one slow moment of a shared machine is told apart.
  const saved = saveFiles(work);
  let night = await measure('the night after one more day');
  for (let repeat = 1; repeat < REPEATS; repeat += 1) {
    restoreFiles(work, saved);
    night = await measure(`the same night again (${repeat + 1} of ${REPEATS})`);
  }
  rmSync(saved.dir, { recursive: true, force: true });
  const differences = await compareTables(work, night.path);
  // And a whole copy of the night's file, as every publish made it before, for the same comparison.
  const full = await measure('a whole copy of the same file (the copy an analyst holds)', async () => {
    const analyst = startAnalyst(publishedSlots(night.path).find((slot) => statSync(slot).ino !== statSync(night.path).ino)!);
    await analyst.ready;
    return async () => void (await analyst.quit());
  });
  if (full.how !== 'full') console.log(`expected a whole copy, got ${full.how}`);
  console.table(rows);
  console.log('where the time went, s');
  for (const row of phases) console.table([row]);

  console.log(differences.length === 0 ? `the published copy equals the database in every table (EXCEPT ALL both ways)` : `DIFFERENT: ${differences.join(', ')}`);
}

/** The tables whose rows differ between the database and its published copy (EXCEPT ALL both ways). */
export async function compareTables(database: string, published: string): Promise<string[]> {
  const session = await Database.open(':memory:');
  try {
    await session.run(`ATTACH ${sqlString(database)} AS a (READ_ONLY); ATTACH ${sqlString(published)} AS b (READ_ONLY)`);
    const tables = await session.all<{ id: string }>("SELECT '\"' || schema_name || '\".\"' || table_name || '\"' AS id FROM duckdb_tables() WHERE database_name = 'a' ORDER BY 1");
    const differences: string[] = [];
    for (const { id } of tables) {
      const [row] = await session.all<{ n: string }>(`SELECT count(*) AS n FROM ((FROM a.${id} EXCEPT ALL FROM b.${id}) UNION ALL (FROM b.${id} EXCEPT ALL FROM a.${id}))`);
      if (row?.n !== '0') differences.push(`${id}: ${row?.n} rows`);
    }
    return differences;
  } finally {
    session.close();
  }
}

/** A copy of the database, its two copies and the published link, to put back (restoreFiles). */
function saveFiles(database: string): { dir: string; files: string[]; published: string; linkedTo: string } {
  const published = publishedPath(database);
  const slots = publishedSlots(published);
  const dir = mkdtempSync(path.join(BENCH_DATA_DIR, 'publish-saved-'));
  const files = [database, ...slots];
  for (const file of files) copyFileSync(file, path.join(dir, path.basename(file)));
  const linkedTo = slots.find((slot) => statSync(slot).ino === statSync(published).ino)!;
  return { dir, files, published, linkedTo };
}

function restoreFiles(database: string, saved: ReturnType<typeof saveFiles>): void {
  removePublishedCopies(database);
  for (const file of saved.files) copyFileSync(path.join(saved.dir, path.basename(file)), file);
  linkSync(saved.linkedTo, saved.published);
}



if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [fills, ...methods] = process.argv.slice(2);
  await benchPublish(Number(fills ?? 1_000_000), methods);
}
