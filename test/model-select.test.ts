import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withAdjustments } from '../src/export/report-definition.ts';
import { REPORTS } from '../reports/index.ts';
import { ConfigError } from '../src/errors.ts';
import { buildModels } from '../src/models/build.ts';
import { validateDeclarations, type ModelDeclaration } from '../src/models/declaration.ts';
import { loadProject, SQL_DIR, type Model, type Project } from '../src/models/project.ts';
import { selectModels, selectTests, splitSelectors } from '../src/models/select.ts';
import { DEFAULT_MODEL_SETTINGS } from '../src/models/settings.ts';
import { runCli } from './support/cli-process.ts';
import { openModelDb } from './support/model-db.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';
import { queryDatabase } from './support/sync-harness.ts';

/**
 * Node selection (issue 14): `--select` / `--exclude` in dbt's forms for build, check and ls. The
 * expected sets are found here from the models' SQL references and the files in sql/, not from
 * the selector code.
 */

const project = loadProject();
const ids = (models: readonly Model[]) => models.map((model) => model.id);
const select = (...selectors: string[]) => ids(selectModels(project, selectors));
const sorted = (values: Iterable<string>) => [...values].sort();

/** Every model reached from `start` by following `next`, `start` included. */
function closure(start: string, next: (id: string) => readonly string[]): Set<string> {
  const seen = new Set([start]);
  const queue = [start];
  while (queue.length > 0) {
    for (const id of next(queue.shift()!)) {
      if (!seen.has(id)) {
        seen.add(id);
        queue.push(id);
      }
    }
  }
  return seen;
}
const readsOf = (id: string) => project.models.find((model) => model.id === id)!.references;
const readersOf = (id: string) => ids(project.models.filter((model) => model.references.includes(id)));
const ancestors = (id: string) => closure(id, readsOf);
const descendants = (id: string) => closure(id, readersOf);

/** The error a selection throws. */
function selectionError(selectors: string[], exclude: string[] = [], source: Project = project): ConfigError {
  try {
    selectModels(source, selectors, exclude);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`"${selectors.join(' ')}" selected something`);
}

describe('selecting models of the project', () => {
  it('+marts.fees_monthly is the mart and every model it reads, transitively: staging and intermediate ones, in build order', () => {
    const chosen = select('+marts.fees_monthly');
    expect(sorted(chosen)).toEqual(sorted(ancestors('marts.fees_monthly')));
    expect(chosen.some((id) => id.startsWith('staging.'))).toBe(true);
    expect(chosen.some((id) => id.startsWith('intermediate.'))).toBe(true);
    expect(chosen.at(-1)).toBe('marts.fees_monthly');
    // Build order: the project's order, each after what it reads.
    expect(chosen).toEqual(ids(project.models).filter((id) => chosen.includes(id)));
    for (const id of chosen) for (const reference of readsOf(id)) expect(chosen.indexOf(reference), `${id} reads ${reference}`).toBeLessThan(chosen.indexOf(id));
  });

  it('int_spot_trades+ is it and every model that reads it: the spot marts among them', () => {
    const chosen = select('int_spot_trades+');
    expect(sorted(chosen)).toEqual(sorted(descendants('intermediate.int_spot_trades')));
    for (const mart of ['marts.spot_lot_matches', 'marts.spot_realized_pnl_daily', 'marts.spot_realized_pnl_monthly']) expect(chosen).toContain(mart);
    expect(chosen[0]).toBe('intermediate.int_spot_trades');
    expect(sorted(select('+int_spot_trades+'))).toEqual(sorted(new Set([...ancestors('intermediate.int_spot_trades'), ...descendants('intermediate.int_spot_trades')])));
  });

  it('layer:staging is every file of sql/staging; a bare name and layer.name are the same model; no selector is every model', () => {
    const files = readdirSync(path.join(SQL_DIR, 'staging')).filter((file) => file.endsWith('.sql')).map((file) => `staging.${file.slice(0, -'.sql'.length)}`);
    expect(sorted(select('layer:staging'))).toEqual(sorted(files));
    expect(select('fees_monthly')).toEqual(['marts.fees_monthly']);
    expect(select('marts.fees_monthly')).toEqual(['marts.fees_monthly']);
    expect(select()).toEqual(ids(project.models));
  });

  it('several selectors are a union (spaces or separate values); --exclude removes what it matches', () => {
    expect(splitSelectors(['fees_daily  fees_monthly', 'layer:staging'])).toEqual(['fees_daily', 'fees_monthly', 'layer:staging']);
    expect(sorted(select('fees_daily', 'fees_monthly'))).toEqual(['marts.fees_daily', 'marts.fees_monthly']);
    expect(sorted(select('+fees_monthly', 'int_spot_trades+'))).toEqual(sorted(new Set([...ancestors('marts.fees_monthly'), ...descendants('intermediate.int_spot_trades')])));
    const excluded = ids(selectModels(project, ['+marts.fees_monthly'], ['layer:staging']));
    expect(sorted(excluded)).toEqual(sorted([...ancestors('marts.fees_monthly')].filter((id) => !id.startsWith('staging.'))));
    expect(selectionError(['fees_monthly'], ['tag:fees']).message).toBe('--exclude: "tag:fees" leaves no model of "fees_monthly" to work on');
  });

  it('tag:report is exactly the marts the workbooks read; tag:spot holds the spot models of both declared layers', () => {
    // Once a period is closed, every workbook also reads the adjustments to closed periods (withAdjustments).
    const read = new Set(REPORTS.map(withAdjustments).flatMap((report) => [...report.sheets.map((sheet) => sheet.mart), report.chart.mart]));
    expect(sorted(select('tag:report'))).toEqual(sorted(read));
    const spot = select('tag:spot');
    expect(spot).toContain('intermediate.int_spot_trades');
    expect(spot).toContain('marts.spot_realized_pnl_monthly');
    expect(spot.every((id) => id.includes('spot'))).toBe(true);
    // Undeclared models (staging) have no tags, so a tag never picks them.
    expect(select('tag:fees').some((id) => id.startsWith('staging.'))).toBe(false);
  });

  it('an unknown, ambiguous or malformed selector is one ConfigError naming it and listing the forms', () => {
    const unknown = selectionError(['marts.fees_montly']);
    expect(unknown.key).toBe('--select');
    expect(unknown.message).toBe('--select: "marts.fees_montly" is not a model of the project (no such file in sql/<layer>/)');
    expect(unknown.hint).toMatch(/^select with model \(fees_monthly, or marts\.fees_monthly\), \+model \(with its ancestors\), model\+ \(with its descendants\), \+model\+, layer:staging\|intermediate\|marts, tag:<tag> \(tags: affiliate, balances, books, closing, fees, futures, journal, prices, report, spot\)/);
    expect(selectionError(['layer:mart']).message).toBe('--select: "layer:mart" is not a layer; the layers are layer:staging, layer:intermediate, layer:marts');
    expect(selectionError(['tag:nope']).message).toBe('--select: "tag:nope" matches no model (no declaration carries the tag)');
    expect(selectionError(['path:sql/marts']).message).toBe('--select: "path:sql/marts" has an unknown method "path:" (the methods are layer: and tag:)');
    for (const malformed of ['++fees_monthly', '+', 'Fees-Monthly', 'marts.fees_monthly.x']) expect(selectionError([malformed]).message).toBe(`--select: "${malformed}" is not a selector`);
    expect(selectionError(['fees_monthly'], ['nope']).message).toMatch(/^--exclude: "nope" is not a model/);

    // A name in two layers must be named with its layer.
    const dir = mkdtempSync(path.join(tmpdir(), 'exledger-select-'));
    try {
      cpSync(SQL_DIR, dir, { recursive: true });
      writeFileSync(path.join(dir, 'marts', 'spot_fills.sql'), 'select * from staging.spot_fills');
      const twice = loadProject(dir);
      expect(selectionError(['spot_fills'], [], twice).message).toBe('--select: "spot_fills" is in several layers (staging.spot_fills, marts.spot_fills): name one');
      expect(ids(selectModels(twice, ['marts.spot_fills']))).toEqual(['marts.spot_fills']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the tests of a selection: the generic tests of the selected models\' declarations and the singular tests that read one of them', () => {
    const chosen = new Set(select('marts.fees_monthly', 'int_spot_trades'));
    const tests = selectTests(project, chosen);
    // Found from the files: generic tests are named after their model; a singular test is a .sql file naming a model it reads.
    const expected = project.tests.filter((test) =>
      test.file.endsWith('.sql') ? test.references.some((reference) => chosen.has(reference)) : [...chosen].some((id) => test.id.startsWith(`${id.replace('.', '/')}_`)),
    );
    expect(tests.map((test) => test.id)).toEqual(expected.map((test) => test.id));
    expect(tests.some((test) => test.id === 'marts/fees_monthly_unique')).toBe(true);
    expect(tests.some((test) => test.id === 'intermediate/int_spot_trades_unique')).toBe(true);
  });

  it('a declaration tag is a snake_case name, given once', () => {
    const declaration = project.models.find((model) => model.id === 'marts.fees_monthly')!.declaration!;
    const validate = (tags: unknown) => () => validateDeclarations([{ layer: 'marts', models: [{ ...declaration, tags } as ModelDeclaration] }], new Set(ids(project.models)), () => 'sql/marts/_models.ts');
    expect(validate(['fees', 'fees'])).toThrow('sql/marts/_models.ts: model fees_monthly: [0].tags: a tag is given twice');
    expect(validate(['Fees'])).toThrow('sql/marts/_models.ts: model fees_monthly: [0].tags[0]: a snake_case name');
  });
});

describe('a partial build reads what it does not rebuild', () => {
  it('a selected model whose input is not in the database fails naming what to build; what reads it is skipped; nothing else is built', async () => {
    const db = await openModelDb();
    try {
      const results = await buildModels(db, DEFAULT_MODEL_SETTINGS, { select: ['int_fees_periods+'] });
      const models = results.filter((result) => result.materialization !== 'macro');
      expect(models.map((result) => result.id)).toEqual(select('int_fees_periods+'));
      expect(models[0]).toMatchObject({ id: 'intermediate.int_fees_periods', status: 'failed', message: 'reads intermediate.int_fees_legs, which is not in this database: build it too (--select +intermediate.int_fees_periods) or run exledger build' });
      for (const result of models.slice(1)) expect(result).toMatchObject({ status: 'skipped' });
      expect(await db.all("SELECT model FROM settings.model_builds")).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('a selected model whose input table was built with other settings fails naming both; with the same settings it builds alone', async () => {
    const db = await openModelDb();
    try {
      expect((await buildModels(db, DEFAULT_MODEL_SETTINGS)).filter((result) => result.status !== 'ok')).toEqual([]);
      const before = await db.all<{ model: string; built_at: string }>('SELECT model, built_at::VARCHAR AS built_at FROM settings.model_builds ORDER BY model');
      const paris = { ...DEFAULT_MODEL_SETTINGS, reportingTimeZone: 'Europe/Paris' };
      const refused = (await buildModels(db, paris, { select: ['marts.fees_monthly'] })).filter((result) => result.materialization !== 'macro');
      expect(refused).toEqual([
        {
          id: 'marts.fees_monthly',
          materialization: 'table',
          status: 'failed',
          ms: 0,
          message:
            'reads intermediate.int_fees_periods, which was built with time zone UTC, cost methods fifo, opening positions none; this build has time zone Europe/Paris, cost methods fifo, opening positions none: build it too (--select +marts.fees_monthly) or run exledger build',
        },
      ]);
      expect(await db.all('SELECT model, built_at::VARCHAR AS built_at FROM settings.model_builds ORDER BY model')).toEqual(before);

      // Selected with its ancestors, it builds in Paris and so do they; the rest keep UTC.
      const withInputs = await buildModels(db, paris, { select: ['+marts.fees_monthly'] });
      expect(withInputs.filter((result) => result.status !== 'ok')).toEqual([]);
      const zones = await db.all<{ model: string; time_zone: string }>('SELECT model, time_zone FROM settings.model_builds ORDER BY model');
      expect(sorted(zones.filter((row) => row.time_zone === 'Europe/Paris').map((row) => row.model))).toEqual(sorted(ancestors('marts.fees_monthly')));
      expect(zones.length).toBe(project.models.length);
    } finally {
      db.close();
    }
  }, 120_000);
});

describe('exledger build, check and ls with --select, as deployed', () => {
  let exchange: SandboxProcess;
  let dir: string;
  const cli = (args: string[]) => runCli(args, { cwd: dir, env: exchange.settings });
  const builds = () => queryDatabase<{ model: string; time_zone: string; built_at: string }>(path.join(dir, 'ledger.duckdb'), 'SELECT model, time_zone, built_at::VARCHAR AS built_at FROM settings.model_builds ORDER BY model');

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01']);
    dir = mkdtempSync(path.join(tmpdir(), 'exledger-select-cli-'));
    writeFileSync(
      path.join(dir, 'exledger.config.json'),
      JSON.stringify({ db: './ledger.duckdb', retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 }, sync: { startDate: '2026-10-01' } }),
    );
    const sync = await cli(['sync', '--quiet', '--streams', 'currencies,spot_assets,funding_bills,spot_fills']);
    expect(sync.code, sync.stderr).toBe(0);
    const build = await cli(['build', '--quiet']);
    expect(build.code, build.stderr).toBe(0);
  }, 180_000);
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('ls --select … --output json lists the selected models in build order with layer, materialization and tags, without a database', async () => {
    // Repeated --select, and two selectors in one value: one union.
    const listed = await runCli(['ls', '--select', '+marts.fees_monthly', '--select', 'tag:affiliate  tag:balances', '--output', 'json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toBe('');
    const models = JSON.parse(listed.stdout) as { id: string; layer: string; materialization: string; tags: string[] }[];
    const expected = new Set([...ancestors('marts.fees_monthly'), ...select('tag:affiliate'), ...select('tag:balances')]);
    expect(models.map((model) => model.id)).toEqual(ids(project.models).filter((id) => expected.has(id)));
    expect(models.find((model) => model.id === 'marts.fees_monthly')).toMatchObject({ layer: 'marts', materialization: 'table', tags: ['fees', 'report'] });
    expect(models.find((model) => model.id === 'staging.spot_fills')).toMatchObject({ layer: 'staging', materialization: 'table', tags: [] });

    const tests = await runCli(['ls', '-s', 'marts.fees_monthly', '--resource-type', 'test', '--output', 'json']);
    expect(tests.code, tests.stderr).toBe(0);
    expect((JSON.parse(tests.stdout) as { id: string }[]).map((test) => test.id)).toEqual(selectTests(project, new Set(['marts.fees_monthly'])).map((test) => test.id));

    const text = await runCli(['ls', '--select', 'layer:marts', '--exclude', 'tag:report']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.trimEnd().split('\n').slice(1).map((line) => line.split(/\s+/)[0])).toEqual(ids(project.models).filter((id) => id.startsWith('marts.') && !select('tag:report').includes(id)));
  }, 120_000);

  it('build --select marts.fees_monthly rebuilds that table alone; its settings row is the only one that moves', async () => {
    const before = await builds();
    expect(before.length).toBe(project.models.length);
    const build = await cli(['build', '--select', 'marts.fees_monthly', '--json']);
    expect(build.code, build.stderr).toBe(0);
    const details = JSON.parse(build.stdout) as { results: { id: string; status: string; materialization: string }[] };
    expect(details.results.filter((result) => result.materialization !== 'macro').map((result) => [result.id, result.status])).toEqual([['marts.fees_monthly', 'ok']]);
    const after = await builds();
    const moved = after.filter((row) => before.find((old) => old.model === row.model)!.built_at !== row.built_at).map((row) => row.model);
    expect(moved).toEqual(['marts.fees_monthly']);

    // In another zone it is refused (its input was built in UTC), and nothing moves: the report guard keeps telling the truth.
    const paris = await cli(['build', '--select', 'fees_monthly', '--time-zone', 'Europe/Paris']);
    expect(paris.code).toBe(1);
    expect(paris.stdout).toContain('reads intermediate.int_fees_periods, which was built with time zone UTC');
    // The macros are always loaded (and not counted as models); the one model selected failed.
    expect(paris.stdout).toMatch(/^build: 0 of 1 model up to date; failed: marts\.fees_monthly \(/m);
    expect(await builds()).toEqual(after);
  }, 120_000);

  it('check --select runs the tests of the selected models only', async () => {
    const check = await cli(['check', '--select', 'int_spot_trades+', '--json']);
    expect(check.code, check.stderr).toBe(0);
    const results = (JSON.parse(check.stdout) as { results: { id: string; status: string }[] }).results;
    const chosen = descendants('intermediate.int_spot_trades');
    const expected = project.tests.filter((test) => (test.file.endsWith('.sql') ? test.references.some((reference) => chosen.has(reference)) : [...chosen].some((id) => test.id.startsWith(`${id.replace('.', '/')}_`))));
    expect(results.map((result) => result.id)).toEqual(expected.map((test) => test.id));
    expect(results.length).toBeLessThan(project.tests.length);
    expect(results.every((result) => result.status === 'pass')).toBe(true);
  }, 120_000);

  it('a bad selector is exit 2 naming it, before anything is built or checked', async () => {
    const before = await builds();
    const build = await cli(['build', '--select', 'marts.fees_montly']);
    expect(build.code).toBe(2);
    expect(build.stdout).toBe('');
    expect(build.stderr).toMatch(/^error: --select: "marts\.fees_montly" is not a model of the project \(no such file in sql\/<layer>\/\)\n {2}fix: select with model \(fees_monthly, or marts\.fees_monthly\), \+model/);
    const check = await cli(['check', '--select', 'layer:mart', '--json']);
    expect(check.code).toBe(2);
    expect(JSON.parse(check.stdout)).toMatchObject({ command: 'check', ok: false, exitCode: 2, error: { type: 'ConfigError', message: '--select: "layer:mart" is not a layer; the layers are layer:staging, layer:intermediate, layer:marts' } });
    const exclude = await cli(['build', '--exclude', 'tag:nope']);
    expect(exclude.code).toBe(2);
    expect(exclude.stderr).toMatch(/^error: --exclude: "tag:nope" matches no model/);
    const ls = await runCli(['ls', '--select', '++x']);
    expect(ls.code).toBe(2);
    expect(ls.stderr).toMatch(/^error: --select: "\+\+x" is not a selector\n/);
    expect(await builds()).toEqual(before);
  }, 120_000);
});
