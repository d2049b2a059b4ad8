import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FONT_SIZE, labelWidth, layoutLineage, type LineageLayout } from '../src/docs/lineage.ts';
import { checkResultsPath, readCheckResults, recordCheckResults, type CheckResultsFile } from '../src/models/check-results.ts';
import { rawInputs } from '../src/models/incremental.ts';
import { loadProject, type Model } from '../src/models/project.ts';
import { splitColumnComment } from '../src/store/comments.ts';
import { Database } from '../src/store/database.ts';
import { runCli } from './support/cli-process.ts';
import { startSandboxProcess, type SandboxProcess } from './support/sandbox-process.ts';
import { queryDatabase } from './support/sync-harness.ts';

/**
 * `exledger docs` (issue 14): the static documentation site of the SQL project. A sandbox
 * history is synced and built by the `exledger` executable in child processes (the sandbox in a
 * process of its own), checked by `exledger check`, documented by `exledger docs`; the pages are
 * then read as files and compared with loadProject(), the database and the check's --json.
 */

const CONFIG = {
  budget: { spot: { quota: 500, windowMs: 1000 }, contract: { quota: 1000, windowMs: 1000 } },
  retry: { retries: 8, minTimeoutMs: 50, maxTimeoutMs: 500 },
  timeoutMs: 10_000,
  sync: { startDate: '2026-09-01' },
  db: './data/exledger.duckdb',
};

const project = loadProject();
/** The raw tables the staging models read (`raw.<stream>`): where the lineage starts, a page each. */
const SOURCES = [...new Set(project.models.flatMap((model) => rawInputs(model).tables.map((table) => `raw.${table}`)))].sort();
/** Every table and column of every schema of a database that lacks a comment (`schema.table`, `schema.table.column`). */
const UNCOMMENTED = `SELECT schema_name || '.' || table_name AS name FROM duckdb_tables() WHERE database_name = current_database() AND coalesce(comment, '') = ''
  UNION ALL SELECT schema_name || '.' || table_name || '.' || column_name FROM duckdb_columns() WHERE database_name = current_database() AND coalesce(comment, '') = ''`;
/** Tables and columns by schema, of the database's own tables (not DuckDB's catalog). */
const COLUMNS_BY_SCHEMA = `SELECT schema_name AS schema, count(DISTINCT table_name)::INTEGER AS tables, count(*)::INTEGER AS columns FROM duckdb_columns()
  WHERE database_name = current_database() GROUP BY schema_name ORDER BY schema_name`;
const MONO = path.join(path.dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');

/** Undoes escapeHtml (and nothing else), to compare a page's text with its source. */
function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!);
}

/** The inline SVG of a page, as a file of its own (HTML gives inline SVG its namespace). */
function svgOf(html: string): string {
  const match = /<svg class="lineage"[\s\S]*?<\/svg>/.exec(html);
  expect(match, 'a lineage graph').not.toBeNull();
  return match![0].replace('<svg ', '<svg xmlns="http://www.w3.org/2000/svg" ');
}

/** The boxes of an SVG's nodes, from its markup. */
function boxesOf(svg: string): { model: string; x: number; y: number; width: number; height: number }[] {
  return [...svg.matchAll(/<a href="[^"]*" data-model="([^"]+)"><g [^>]*><title>[^<]*<\/title><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"/g)].map((match) => ({
    model: unescapeHtml(match[1]!),
    x: Number(match[2]),
    y: Number(match[3]),
    width: Number(match[4]),
    height: Number(match[5]),
  }));
}

function expectNoOverlap(boxes: readonly { x: number; y: number; width: number; height: number }[], label: string): void {
  for (let i = 0; i < boxes.length; i += 1) {
    for (let j = i + 1; j < boxes.length; j += 1) {
      const a = boxes[i]!;
      const b = boxes[j]!;
      const apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
      expect(apart, `${label}: boxes ${i} and ${j} overlap`).toBe(true);
    }
  }
}

/** The models a model's page links as upstream and downstream. */
function neighboursOf(html: string): { upstream: string[]; downstream: string[] } {
  const list = (heading: string) => {
    const section = new RegExp(`<h3>${heading} <small>[^<]*</small></h3>(<ul class="links">(.*?)</ul>|<span class="muted">[^<]*</span>)`).exec(html);
    expect(section, heading).not.toBeNull();
    return [...(section![2] ?? '').matchAll(/<a href="\.\.\/(?:models|sources)\/([^"]+)\.html"><code>([^<]+)<\/code><\/a>/g)].map((match) => {
      expect(match[1]).toBe(match[2]);
      return match[2]!;
    });
  };
  return { upstream: list('Upstream'), downstream: list('Downstream') };
}

function downstreamOf(model: Model): string[] {
  return project.models.filter((other) => other.references.includes(model.id)).map((other) => other.id).sort();
}

describe('the lineage layout', () => {
  const graphs: [string, LineageLayout][] = [
    ['the whole project', layoutLineage(project.models.map((model) => ({ id: model.id, layer: model.layer, label: model.name })), project.models.flatMap((model) => model.references.map((from) => ({ from, to: model.id }))))],
  ];

  it('boxes never overlap, every label fits its box, every edge runs left to right, staging → intermediate → marts', () => {
    for (const [label, layout] of graphs) {
      expect(layout.nodes.map((node) => node.id).sort()).toEqual(project.models.map((model) => model.id).sort());
      expectNoOverlap(layout.nodes, label);
      for (const node of layout.nodes) {
        expect(node.labelWidth, node.id).toBe(labelWidth(node.label));
        expect(node.labelWidth + 2 * 10, node.id).toBeLessThanOrEqual(node.width);
        expect(node.x + node.width, node.id).toBeLessThanOrEqual(layout.width);
        expect(node.y + node.height, node.id).toBeLessThanOrEqual(layout.height);
      }
      const byId = new Map(layout.nodes.map((node) => [node.id, node]));
      expect(layout.edges.length).toBe(project.models.reduce((sum, model) => sum + model.references.length, 0));
      for (const edge of layout.edges) expect(byId.get(edge.from)!.x + byId.get(edge.from)!.width, `${edge.from} → ${edge.to}`).toBeLessThan(byId.get(edge.to)!.x);
      const order = ['staging', 'intermediate', 'marts'];
      for (const a of layout.nodes) for (const b of layout.nodes) if (order.indexOf(a.layer) < order.indexOf(b.layer)) expect(a.x, `${a.id} left of ${b.id}`).toBeLessThan(b.x);
    }
  });

  it("the labels' room is at least what DejaVu Sans Mono (regular and bold) really takes, measured by resvg", () => {
    for (const model of project.models) {
      for (const font of ['DejaVuSansMono.ttf', 'DejaVuSansMono-Bold.ttf']) {
        const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="40"><text x="0" y="20" font-family="DejaVu Sans Mono" font-size="${FONT_SIZE}">${model.name}</text></svg>`;
        const measured = new Resvg(svg, { font: { fontFiles: [path.join(MONO, font)], loadSystemFonts: false, defaultFontFamily: 'DejaVu Sans Mono' } }).innerBBox();
        expect(measured, model.name).toBeDefined();
        expect(measured!.x + measured!.width, `${model.name} in ${font}`).toBeLessThanOrEqual(labelWidth(model.name));
      }
    }
  });
});

describe('the check results file', () => {
  it('is named after the database, written whole (no temporary file left, a dead one removed), read back; a broken one is "unreadable", a missing one "none"', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-check-results-'));
    try {
      const db = path.join(dir, 'ledger.duckdb');
      expect(checkResultsPath(db)).toBe(path.join(dir, 'ledger.check-results.json'));
      expect(checkResultsPath(path.join(dir, 'ledger'))).toBe(path.join(dir, 'ledger.check-results.json'));
      expect(readCheckResults(db)).toEqual({ kind: 'none', file: checkResultsPath(db) });
      // What a check killed while writing would leave (pid 2^22 + 1 is above Linux's pid_max limit, so never alive).
      writeFileSync(path.join(dir, `.ledger.check-results.json.tmp-${2 ** 22 + 1}`), '{"half');
      const started = new Date('2026-11-23T02:15:00.000Z');
      const file = await recordCheckResults(db, [
        { id: 'marts/a_unique', status: 'pass', offending: 0, sample: [], ms: 1.4 },
        { id: 'marts/b_sums', status: 'fail', offending: 3, sample: [{ secret: 'not kept' }], ms: 2 },
        { id: 'marts/c', status: 'error', offending: 0, sample: [], message: 'Table marts.c does not exist', ms: 0.2 },
      ], started, { finishedAt: new Date('2026-11-23T02:15:01.000Z') });
      expect(readdirSync(dir)).toEqual(['ledger.check-results.json']);
      const read = readCheckResults(db);
      expect(read).toEqual({
        kind: 'recorded',
        file,
        results: {
          version: 1,
          database: db,
          startedAt: '2026-11-23T02:15:00.000Z',
          finishedAt: '2026-11-23T02:15:01.000Z',
          results: [
            { id: 'marts/a_unique', status: 'pass', offending: 0, ms: 1, checkedAt: '2026-11-23T02:15:01.000Z' },
            { id: 'marts/b_sums', status: 'fail', offending: 3, ms: 2, checkedAt: '2026-11-23T02:15:01.000Z' },
            { id: 'marts/c', status: 'error', offending: 0, message: 'Table marts.c does not exist', ms: 0, checkedAt: '2026-11-23T02:15:01.000Z' },
          ],
        },
      });
      // A selected check (--select) updates its tests and keeps the others' earlier results; a full one replaces them all.
      const later = new Date('2026-11-24T02:15:00.000Z');
      await recordCheckResults(db, [{ id: 'marts/b_sums', status: 'pass', offending: 0, sample: [], ms: 1 }, { id: 'marts/d', status: 'pass', offending: 0, sample: [], ms: 1 }], later, { finishedAt: later, partial: true });
      const partial = readCheckResults(db);
      expect(partial.kind === 'recorded' && partial.results.results.map((result) => [result.id, result.status, result.checkedAt])).toEqual([
        ['marts/a_unique', 'pass', '2026-11-23T02:15:01.000Z'],
        ['marts/b_sums', 'pass', '2026-11-24T02:15:00.000Z'],
        ['marts/c', 'error', '2026-11-23T02:15:01.000Z'],
        ['marts/d', 'pass', '2026-11-24T02:15:00.000Z'],
      ]);
      await recordCheckResults(db, [{ id: 'marts/a_unique', status: 'fail', offending: 1, sample: [], ms: 1 }], later, { finishedAt: later });
      const full = readCheckResults(db);
      expect(full.kind === 'recorded' && full.results.results.map((result) => result.id)).toEqual(['marts/a_unique']);
      writeFileSync(file, '{"version": 1, "results": [');
      expect(readCheckResults(db)).toMatchObject({ kind: 'unreadable', file });
      writeFileSync(file, '{"version": 2}');
      expect(readCheckResults(db)).toEqual({ kind: 'unreadable', file, reason: 'not a check results file of this version' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('exledger docs: a static documentation site of the SQL project', () => {
  let exchange: SandboxProcess;
  let dir: string;
  let env: Record<string, string>;
  const cli = (args: string[]) => runCli(args, { cwd: dir, env });
  const read = (file: string) => readFileSync(path.join(dir, file), 'utf8');
  const database = () => path.join(dir, 'data', 'exledger.duckdb');

  beforeAll(async () => {
    exchange = await startSandboxProcess(['--end', '2026-11-01', '--window-ms', '1000', '--spot-quota', '500', '--futures-quota', '1000']);
    dir = mkdtempSync(path.join(os.tmpdir(), 'exledger-docs-'));
    writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify(CONFIG));
    env = exchange.settings;
    const sync = await cli(['sync', '--quiet']);
    expect(sync.code, sync.stderr).toBe(0);
    const build = await cli(['build', '--quiet']);
    expect(build.code, build.stderr).toBe(0);
  }, 180_000);
  afterAll(async () => {
    expect(await exchange?.stop()).toBe(0);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('every table and every column of every schema (meta, raw, settings, staging, intermediate, marts) has a comment; the raw ones say what the stream declaration says', async () => {
    const schemas = await queryDatabase<{ schema: string; tables: number; columns: number }>(database(), COLUMNS_BY_SCHEMA);
    expect(schemas.map((row) => row.schema)).toEqual(['intermediate', 'marts', 'meta', 'raw', 'settings', 'staging']);
    for (const row of schemas) expect(row.columns, row.schema).toBeGreaterThan(row.tables);
    expect(await queryDatabase(database(), UNCOMMENTED)).toEqual([]);
    // A raw table: the stream's description, its endpoint, its declared fields; units split off as the docs and the export read them.
    const [table] = await queryDatabase<{ comment: string }>(database(), "SELECT comment FROM duckdb_tables() WHERE schema_name = 'raw' AND table_name = 'spot_fills'");
    expect(table!.comment).toMatch(/^Spot trade executions, one row per fill, as the exchange endpoint spot\.fills sent it: /);
    const columns = await queryDatabase<{ column_name: string; comment: string }>(database(), "SELECT column_name, comment FROM duckdb_columns() WHERE schema_name = 'raw' AND table_name = 'spot_fills'");
    const meaning = Object.fromEntries(columns.map((column) => [column.column_name, splitColumnComment(column.comment)]));
    expect(meaning._event_ms).toEqual({ description: 'Time of the record: its cTime', unit: 'ms since 1970-01-01 UTC' });
    expect(meaning._record!.description).toContain('fillPrice (amount, optional), fillQuantity (amount)');
    expect(meaning._key).toEqual({ description: "Identity of the record within the account: the record's fillId", unit: null });
    const [covered] = await queryDatabase<{ comment: string }>(database(), "SELECT comment FROM duckdb_columns() WHERE schema_name = 'meta' AND table_name = 'cursors' AND column_name = 'covered_until_ms'");
    expect(splitColumnComment(covered!.comment).unit).toBe('ms since 1970-01-01 UTC');
  });

  it('before any check, every test is "not run yet"; the summary line names pages, models and the folder', async () => {
    const docs = await cli(['docs']);
    expect(docs.code, docs.stderr).toBe(0);
    expect(docs.stderr).toBe('');
    expect(docs.stdout).toMatch(new RegExp(`^docs: ${project.models.length + SOURCES.length + 1} pages, ${project.models.length} models \\(tests not run yet \\(run exledger check\\)\\) in docs-site/index\\.html \\(`));
    const index = read('docs-site/index.html');
    expect(index).toContain('Test results: <strong>not run yet</strong>');
    expect(index).toContain(`<span class="status not-run">${project.tests.length} not run</span>`);
    const page = read('docs-site/models/marts.fees_monthly.html');
    expect(page).not.toMatch(/data-status="(pass|fail|error)"/);
    expect(page).toContain('<span class="status not-run">not run yet</span>');
  }, 60_000);

  it('after exledger check: a page per model, declared columns with descriptions, row counts as the database has them, links as the references, test results as the check gave them', async () => {
    const check = await cli(['check', '--json']);
    expect(check.code, check.stderr).toBe(0);
    const checked = JSON.parse(check.stdout) as { results: { id: string; status: string; offending: number }[]; resultsFile: string };
    expect(checked.resultsFile).toBe(path.join(dir, 'data', 'exledger.check-results.json'));
    const recorded = JSON.parse(readFileSync(checked.resultsFile, 'utf8')) as CheckResultsFile;
    expect(recorded).toMatchObject({ version: 1, database: database() });
    expect(recorded.results.map((result) => [result.id, result.status, result.offending])).toEqual(checked.results.map((result) => [result.id, result.status, result.offending]));

    const docs = await cli(['docs', '--json', '--out', 'site']);
    expect(docs.code, docs.stderr).toBe(0);
    const details = JSON.parse(docs.stdout) as { command: string; ok: boolean; path: string; pages: number; models: number; tests: Record<string, number> };
    const statuses = (status: string) => checked.results.filter((result) => result.status === status).length;
    expect(details).toMatchObject({ command: 'docs', ok: true, path: path.join(dir, 'site'), pages: project.models.length + SOURCES.length + 1, models: project.models.length, tests: { pass: statuses('pass'), fail: statuses('fail'), error: statuses('error'), 'not-run': 0 } });

    // Every model of the project has a page, linked from the index; nothing else is there.
    expect(readdirSync(path.join(dir, 'site')).sort()).toEqual(['_docs.json', 'index.html', 'models', 'sources', 'style.css']);
    expect(readdirSync(path.join(dir, 'site', 'models')).sort()).toEqual(project.models.map((model) => `${model.id}.html`).sort());
    expect(readdirSync(path.join(dir, 'site', 'sources')).sort()).toEqual(SOURCES.map((id) => `${id}.html`));
    expect(SOURCES.length).toBe(12);
    const index = read('site/index.html');
    for (const model of project.models) expect(index, model.id).toContain(`<a href="models/${model.id}.html"><code>${model.name}</code></a>`);
    expect(index).toContain(`on <code>${database()}</code>`);

    const counts = await queryDatabase<{ model: string; n: string }>(
      database(),
      project.models.map((model) => `SELECT '${model.id}' AS model, count(*)::VARCHAR AS n FROM ${model.id}`).join(' UNION ALL '),
    );
    const byStatus = new Map(checked.results.map((result) => [result.id, result]));
    for (const model of project.models) {
      const page = read(`site/models/${model.id}.html`);
      // Row count, as `select count(*)` gives it.
      const rows = Number(counts.find((row) => row.model === model.id)!.n);
      expect(page, model.id).toContain(`<dt>rows</dt><dd><span class="rows">${rows.toLocaleString('en-US')}</span></dd>`);
      // Upstream and downstream links: the raw tables it reads, then the model's references; the models referencing it.
      const sources = rawInputs(model).tables.map((table) => `raw.${table}`);
      expect(neighboursOf(page), model.id).toEqual({ upstream: [...sources, ...[...model.references].sort()], downstream: downstreamOf(model) });
      // Every staging model reads raw tables, and only staging models do.
      expect(sources.length > 0, model.id).toBe(model.layer === 'staging');
      // The SQL, escaped: unescaping the <pre> gives the file back.
      const sql = /<pre class="sql">([\s\S]*?)<\/pre>/.exec(page)![1]!;
      expect(unescapeHtml(sql), model.id).toBe(model.sql.trimEnd());
      expect(sql).not.toMatch(/<(?!\/pre)/);
      // Headed as what it is: SQL, or the code of a model computed in TypeScript (sql/<layer>/<name>.ts).
      expect(page, model.id).toContain(model.file.endsWith('.ts') ? '<h2>Code (a model computed in TypeScript) <small>' : '<h2>SQL <small>');
      // Its tests: every test reading it, each with the status the check gave it.
      const rowsOfTests = [...page.matchAll(/<tr data-test="([^"]+)" data-status="([^"]+)">/g)].map((match) => [match[1], match[2]]);
      expect(rowsOfTests, model.id).toEqual(project.tests.filter((test) => test.references.includes(model.id)).map((test) => [test.id, byStatus.get(test.id)!.status]));
      // Its lineage: well-formed SVG (resvg parses it), a box per model of its neighbourhood, none overlapping.
      const svg = svgOf(page);
      expect(() => new Resvg(svg, { font: { loadSystemFonts: false } }), model.id).not.toThrow();
      const boxes = boxesOf(svg);
      expect(boxes.map((box) => box.model), model.id).toContain(model.id);
      for (const neighbour of [...sources, ...model.references, ...downstreamOf(model)]) expect(boxes.map((box) => box.model), `${model.id}: ${neighbour}`).toContain(neighbour);
      expectNoOverlap(boxes, model.id);
      if (model.declaration === undefined) expect(page, model.id).toContain('not declared');
    }

    // A marts model: every declared column with its description, unit and DuckDB type.
    const fees = project.models.find((model) => model.id === 'marts.fees_monthly')!;
    const page = read('site/models/marts.fees_monthly.html');
    const types = await queryDatabase<{ column_name: string; data_type: string }>(database(), "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'marts' AND table_name = 'fees_monthly'");
    const shown = [...page.matchAll(/<tr data-column="([^"]+)"><td><code>[^<]*<\/code>[^]*?<\/td><td><code>([^<]*)<\/code><\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><\/tr>/g)].map((match) => ({
      name: match[1],
      type: unescapeHtml(match[2]!),
      description: unescapeHtml(match[3]!),
      unit: unescapeHtml(match[4]!),
    }));
    expect(shown).toEqual(
      fees.declaration!.columns.map((column) => ({ name: column.name, type: types.find((row) => row.column_name === column.name)!.data_type, description: column.description, unit: column.unit ?? '' })),
    );
    expect(page).toContain(`<dt>grain</dt><dd>${fees.declaration!.grain}</dd>`);

    // The whole lineage on the index: a box per raw table and per model, none overlapping, well-formed; the raw tables leftmost.
    const svg = svgOf(index);
    expect(() => new Resvg(svg, { font: { loadSystemFonts: false } })).not.toThrow();
    const boxes = boxesOf(svg);
    expect(boxes.map((box) => box.model).sort()).toEqual([...SOURCES, ...project.models.map((model) => model.id)].sort());
    expectNoOverlap(boxes, 'index');
    const rawRight = Math.max(...boxes.filter((box) => box.model.startsWith('raw.')).map((box) => box.x + box.width));
    for (const box of boxes.filter((candidate) => !candidate.model.startsWith('raw.'))) expect(box.x, box.model).toBeGreaterThan(rawRight);
    expect(svg).toContain('<text class="layer-heading" x="12" y="24">raw</text>');

    // The lineage starts at the raw tables: staging.spot_fills names raw.spot_fills as its upstream, linked to its page,
    // which shows the table's columns with the descriptions and units the sync wrote from the stream declaration.
    const spotFills = read('site/models/staging.spot_fills.html');
    expect(spotFills).toContain('<h3>Upstream <small>what it reads</small></h3><ul class="links"><li><a href="../sources/raw.spot_fills.html"><code>raw.spot_fills</code></a></li></ul>');
    expect(boxesOf(svgOf(spotFills)).map((box) => box.model)).toContain('raw.spot_fills');
    const rawPage = read('site/sources/raw.spot_fills.html');
    expect(neighboursOf(rawPage).downstream).toEqual(['staging.spot_fills']);
    const comments = await queryDatabase<{ column_name: string; data_type: string; comment: string }>(database(), "SELECT column_name, data_type, comment FROM duckdb_columns() WHERE schema_name = 'raw' AND table_name = 'spot_fills' ORDER BY column_index");
    const rawShown = [...rawPage.matchAll(/<tr data-column="([^"]+)"><td><code>[^<]*<\/code><\/td><td><code>([^<]*)<\/code><\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><\/tr>/g)].map((match) => ({
      name: match[1],
      type: unescapeHtml(match[2]!),
      description: unescapeHtml(match[3]!),
      unit: unescapeHtml(match[4]!),
    }));
    expect(rawShown).toEqual(comments.map((column) => ({ name: column.column_name, type: column.data_type, ...splitColumnComment(column.comment), unit: splitColumnComment(column.comment).unit ?? '' })));
    expect(rawShown.map((column) => column.name)).toEqual(['_account', '_partition', '_key', '_event_ms', '_record', '_run_id', '_fetched_at']);
    expect(index).toContain('<a href="sources/raw.spot_fills.html"><code>spot_fills</code></a>');

    // No network: no script, and nothing loaded from elsewhere (links and sources are relative).
    for (const file of ['index.html', 'style.css', ...project.models.map((model) => `models/${model.id}.html`), ...SOURCES.map((id) => `sources/${id}.html`)]) {
      const text = read(`site/${file}`);
      expect(text, file).not.toMatch(/<script|<iframe|@import/i);
      expect(text, file).not.toMatch(/(?:href|src|xlink:href)\s*=\s*["']?\s*(?:[a-z]+:)?\/\//i);
      expect(text, file).not.toMatch(/url\(\s*["']?\s*(?:[a-z]+:)?\/\//i);
    }
  }, 120_000);

  it('a second run replaces the site whole; a bad --out (a file, a folder of other things, under a missing folder) is exit 2 naming it, and a missing database is the error other read commands give', async () => {
    writeFileSync(path.join(dir, 'site', 'stale.html'), 'from before');
    const again = await cli(['docs', '--out', 'site', '--quiet']);
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(path.join(dir, 'site', 'stale.html'))).toBe(false);
    expect(readdirSync(dir).filter((name) => name.startsWith('.site.'))).toEqual([]);

    writeFileSync(path.join(dir, 'a-file'), 'not a folder');
    const file = await cli(['docs', '--out', 'a-file']);
    expect(file.code).toBe(2);
    expect(file.stderr).toMatch(new RegExp(`^error: ${path.join(dir, 'a-file')}: is a file, not a folder\\n  fix: `));
    expect(read('a-file')).toBe('not a folder');

    mkdirSync(path.join(dir, 'mine'));
    writeFileSync(path.join(dir, 'mine', 'notes.txt'), 'keep me');
    const other = await cli(['docs', '--out', 'mine']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`error: ${path.join(dir, 'mine')}: is a folder with other things in it`);
    expect(readdirSync(path.join(dir, 'mine'))).toEqual(['notes.txt']);

    const missingParent = await cli(['docs', '--out', 'no/such/site']);
    expect(missingParent.code).toBe(2);
    expect(missingParent.stderr).toMatch(new RegExp(`^error: ${path.join(dir, 'no/such/site')}: cannot be written: its parent folder ${path.join(dir, 'no/such')} does not exist\\n  fix: `));
    expect(existsSync(path.join(dir, 'no'))).toBe(false);

    const missingDb = await cli(['docs', '--db', 'data/typo.duckdb']);
    const checkMissingDb = await cli(['check', '--db', 'data/typo.duckdb']);
    expect(missingDb.code).toBe(2);
    expect(missingDb.stderr).toBe(checkMissingDb.stderr);
    expect(missingDb.stderr).toContain(`error: ${path.join(dir, 'data', 'typo.duckdb')}: no database here`);
    // Nothing was written for the failed runs.
    expect(readdirSync(dir).sort()).toEqual(['a-file', 'data', 'docs-site', 'exledger.config.json', 'mine', 'site']);
  }, 60_000);

  it('a test made to fail shows as failed with its offending count from that check (a selected one: the other tests keep their results); hostile text from the database is escaped', async () => {
    // A duplicated row breaks the key of marts.fees_monthly; a comment holds markup.
    const hostile = `<img src=x onerror="alert(1)"> & 'quoted'`;
    const db = await Database.open(database());
    try {
      await db.run('INSERT INTO marts.fees_monthly SELECT * FROM marts.fees_monthly LIMIT 1');
      await db.run(`COMMENT ON VIEW staging.currencies IS '${hostile.replace(/'/g, "''")}'`);
    } finally {
      db.close();
    }
    // Only that model's tests (--select): the others keep their results of the full check before, which all passed.
    const check = await cli(['check', '--select', 'marts.fees_monthly', '--json']);
    expect(check.code).toBe(1);
    const checked = JSON.parse(check.stdout) as { results: { id: string; status: string; offending: number }[] };
    expect(checked.results.length).toBeLessThan(project.tests.length);
    const failed = checked.results.filter((result) => result.status !== 'pass');
    expect(failed.map((result) => result.id)).toContain('marts/fees_monthly_unique');

    const docs = await cli(['docs', '--out', 'site']);
    expect(docs.code, docs.stderr).toBe(0);
    expect(docs.stdout).toContain(`tests: ${project.tests.length - failed.length} pass, ${failed.length} fail, 0 error)`);
    const page = read('site/models/marts.fees_monthly.html');
    for (const result of failed.filter((result) => project.tests.find((test) => test.id === result.id)!.references.includes('marts.fees_monthly'))) {
      const row = page.split('<tr ').find((candidate) => candidate.startsWith(`data-test="${result.id}"`));
      expect(row, result.id).toMatch(new RegExp(`^data-test="${result.id}" data-status="fail">[^]*<span class="status fail">fail: ${result.offending} offending row${result.offending === 1 ? '' : 's'}</span></td><td class="number">${result.offending}</td>`));
    }
    const currencies = read('site/models/staging.currencies.html');
    expect(currencies).not.toContain(hostile);
    expect(read('site/index.html')).not.toContain(hostile);
    if (project.models.find((model) => model.id === 'staging.currencies')!.declaration === undefined) {
      expect(currencies).toContain(`<p class="description">&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &#39;quoted&#39;</p>`);
    }
  }, 60_000);
  it('exledger run publishes the last check results beside the published copy: docs on the published copy shows them (pass counts, the failed test), not "not run yet"; its tables and columns keep every comment', async () => {
    // The run's check fails the test the previous test broke (the duplicated row), and publishes anyway (a partial run).
    const run = await cli(['run', '--json']);
    const outcome = JSON.parse(run.stdout) as { published: { path: string; checkResults: string | null } | null };
    const published = path.join(dir, 'data', 'exledger.published.duckdb');
    expect(outcome.published, run.stderr).toMatchObject({ path: published, checkResults: path.join(dir, 'data', 'exledger.published.check-results.json') });
    const checked = readCheckResults(database());
    expect(checked.kind).toBe('recorded');
    const results = checked.kind === 'recorded' ? checked.results.results : [];
    const count = (status: string) => results.filter((result) => result.status === status).length;
    expect(count('pass')).toBeGreaterThan(100);
    expect(count('fail')).toBeGreaterThan(0);

    const docs = await cli(['docs', '--db', published, '--out', 'published-site', '--json']);
    expect(docs.code, docs.stderr).toBe(0);
    expect(JSON.parse(docs.stdout)).toMatchObject({ tests: { pass: count('pass'), fail: count('fail'), error: count('error'), 'not-run': 0 } });
    const index = read('published-site/index.html');
    expect(index).not.toContain('not run yet');
    expect(index).toContain(`<span class="status pass">${count('pass')} pass</span> <span class="status fail">${count('fail')} fail</span>`);
    expect(index).toContain(`Test results: last <code>exledger check</code> ${checked.kind === 'recorded' ? checked.results.finishedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : ''} on <code>${database()}</code>, published with this copy (<code>${path.join(dir, 'data', 'exledger.published.check-results.json')}</code>).`);
    const fees = read('published-site/models/marts.fees_monthly.html');
    expect(fees).toContain('data-test="marts/fees_monthly_unique" data-status="fail"');
    expect(fees).not.toContain('<span class="status not-run">');

    // The published copy is the database's comments and all.
    expect(await queryDatabase(published, UNCOMMENTED)).toEqual([]);
    expect(await queryDatabase(published, COLUMNS_BY_SCHEMA)).toEqual(await queryDatabase(database(), COLUMNS_BY_SCHEMA));
  }, 120_000);
});
