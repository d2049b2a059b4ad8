import { LAYERS, MATERIALIZATION, type Layer } from '../models/project.ts';
import { escapeHtml } from './html.ts';
import { layoutLineage, renderLineageSvg, type LineageEdge, type LineageNode } from './lineage.ts';
import type { SiteColumn, SiteData, SiteModel, SiteSource, SiteTest } from './site-data.ts';
import { countOf, formatCount } from '../count-text.ts';

/**
 * The documentation site as files (path relative to the site's folder → content): index.html
 * (every model by layer, the whole lineage), models/<layer>.<name>.html (one page per model),
 * sources/raw.<stream>.html (one page per raw table, where the lineage starts) and style.css. Plain HTML and CSS, no script and nothing fetched: it opens from `file://`. Every
 * text from the SQL project or the database is escaped.
 */
export function renderSite(site: SiteData): Map<string, string> {
  const files = new Map<string, string>();
  files.set('style.css', STYLE);
  files.set('index.html', renderIndex(site));
  for (const model of site.models) files.set(modelPage(model.id), renderModel(site, model));
  for (const source of site.sources) files.set(sourcePage(source.id), renderSource(site, source));
  return files;
}

/** The page of a model, relative to the site's folder. */
export function modelPage(id: string): string {
  return `models/${id}.html`;
}

/** The page of a raw table (`raw.<stream>`), relative to the site's folder. */
export function sourcePage(id: string): string {
  return `sources/${id}.html`;
}

/** The page of a node of the lineage: a raw table's or a model's. */
function nodePage(id: string): string {
  return id.startsWith('raw.') ? sourcePage(id) : modelPage(id);
}

const h = escapeHtml;

function page(title: string, root: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${h(title)}</title>
<link rel="stylesheet" href="${root}style.css">
</head>
<body>
${body}
</body>
</html>
`;
}

/** Every node of the lineage (raw tables and models) with what it reads and what reads it. */
type GraphNode = LineageNode & { upstream: readonly string[]; downstream: readonly string[] };
function lineageGraph(site: SiteData): Map<string, GraphNode> {
  const nodes: GraphNode[] = [
    ...site.sources.map((source): GraphNode => ({ id: source.id, layer: 'raw', label: source.name, upstream: [], downstream: source.downstream })),
    ...site.models.map((model): GraphNode => ({ id: model.id, layer: model.layer, label: model.name, upstream: [...model.sources, ...model.upstream], downstream: model.downstream })),
  ];
  return new Map(nodes.map((node) => [node.id, node]));
}

/** The whole lineage (raw tables and models), or a node's: everything upstream and downstream of it. */
function lineageSvg(site: SiteData, root: string, focus?: { id: string }): string {
  const graph = lineageGraph(site);
  let ids: Set<string> | undefined;
  if (focus !== undefined) {
    ids = new Set([focus.id]);
    const walk = (id: string, next: (node: { upstream: readonly string[]; downstream: readonly string[] }) => readonly string[]) => {
      for (const other of next(graph.get(id)!)) {
        if (ids!.has(other) || !graph.has(other)) continue;
        ids!.add(other);
        walk(other, next);
      }
    };
    walk(focus.id, (node) => node.upstream);
    walk(focus.id, (node) => node.downstream);
  }
  const chosen = [...graph.values()].filter((node) => ids === undefined || ids.has(node.id));
  const nodes: LineageNode[] = chosen.map(({ id, layer, label }) => ({ id, layer, label }));
  const edges: LineageEdge[] = chosen.flatMap((node) => node.upstream.map((from) => ({ from, to: node.id })));
  const title = focus === undefined ? 'Lineage of every model, from the raw tables' : `Lineage of ${focus.id}: what it reads and what reads it`;
  return `<div class="graph">${renderLineageSvg(layoutLineage(nodes, edges), { href: (id) => `${root}${nodePage(id)}`, focus: focus?.id, title })}</div>`;
}

function formatRows(rows: number | null): string {
  return rows === null ? '<span class="muted">not built</span>' : formatCount(rows);
}

function formatInstant(iso: string): string {
  return h(iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/Z$/, ' UTC'));
}

/** The line saying where the test results come from. */
function checkLine(site: SiteData): string {
  const check = site.check;
  if (check.kind === 'none') return `Test results: <strong>not run yet</strong> (no <code>${h(check.file)}</code>; run <code>exledger check</code>).`;
  if (check.kind === 'unreadable') return `Test results: <strong>unreadable</strong> (<code>${h(check.file)}</code>: ${h(check.reason)}); run <code>exledger check</code> again.`;
  const other = check.sameDatabase ? '' : ` <strong class="fail">from another database, ${h(check.database)}</strong>`;
  const published = check.published ? ', published with this copy' : '';
  return `Test results: last <code>exledger check</code> ${formatInstant(check.finishedAt)} on <code>${h(check.database)}</code>${published}${other} (<code>${h(check.file)}</code>).`;
}

function testCounts(tests: readonly SiteTest[]): string {
  if (tests.length === 0) return '<span class="muted">none</span>';
  const count = (status: string) => tests.filter((test) => (test.last?.status ?? 'not-run') === status).length;
  const parts = [
    ['pass', 'pass'],
    ['fail', 'fail'],
    ['error', 'error'],
    ['not-run', 'not run'],
  ]
    .map(([status, label]) => [count(status!), status!, label!] as const)
    .filter(([n]) => n > 0)
    .map(([n, status, label]) => `<span class="status ${status}">${n} ${label}</span>`);
  return parts.join(' ');
}

function renderIndex(site: SiteData): string {
  const sections = LAYERS.map((layer: Layer) => {
    const models = site.models.filter((model) => model.layer === layer);
    const rows = models
      .map(
        (model) =>
          `<tr><td><a href="${h(modelPage(model.id))}"><code>${h(model.name)}</code></a></td><td>${model.description === null ? '<span class="muted">not declared</span>' : h(model.description)}</td><td class="number">${formatRows(model.rows)}</td><td>${testCounts(model.tests)}</td></tr>`,
      )
      .join('\n');
    return `<section id="${layer}">
<h2>${layer} <small>${models.length} ${MATERIALIZATION[layer]}s</small></h2>
<table class="models">
<thead><tr><th>model</th><th>description</th><th class="number">rows</th><th>tests</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>`;
  }).join('\n');
  const tests = site.tests;
  const projectWide = tests.filter((test) => test.references.length === 0);
  const projectWideSection =
    projectWide.length === 0
      ? ''
      : `<section id="project-tests">
<h2>Project-wide tests <small>they read no model by name</small></h2>
<table class="tests">
<thead><tr><th>test</th><th>kind</th><th>last result</th><th class="number">offending</th><th>when</th><th>written in</th></tr></thead>
<tbody>
${projectWide.map((test) => renderTest(site, undefined, test)).join('\n')}
</tbody>
</table>
</section>`;
  return page(
    'exledger: the SQL project',
    '',
    `<header>
<h1>exledger <small>the SQL project</small></h1>
<p>${site.models.length} models (${LAYERS.map((layer) => `<a href="#${layer}">${site.models.filter((model) => model.layer === layer).length} ${layer}</a>`).join(', ')}) read from <a href="#raw">${site.sources.length} raw tables</a>, ${tests.length} tests: ${testCounts(tests)}</p>
<p class="muted">Database <code>${h(site.database)}</code>, read ${formatInstant(site.generatedAt)}. ${checkLine(site)}</p>
</header>
<main>
<section id="lineage">
<h2>Lineage <small>data flows left to right: raw → staging → intermediate → marts</small></h2>
${lineageSvg(site, '')}
</section>
${sourcesSection(site)}
${sections}
${projectWideSection}
</main>
${footer(site)}`,
  );
}

/** The index's list of raw tables: what the sync stored, where the lineage starts. */
function sourcesSection(site: SiteData): string {
  const rows = site.sources
    .map(
      (source) =>
        `<tr><td><a href="${h(sourcePage(source.id))}"><code>${h(source.name)}</code></a></td><td>${source.description === null ? '<span class="muted">no description</span>' : h(source.description)}</td><td class="number">${source.rows === null ? '<span class="muted">not synced</span>' : formatCount(source.rows)}</td><td>${source.downstream.map((id) => `<a href="${h(modelPage(id))}"><code>${h(id)}</code></a>`).join(', ')}</td></tr>`,
    )
    .join('\n');
  return `<section id="raw">
<h2>raw <small>${site.sources.length} tables: what the exchange sent, as the sync stored it</small></h2>
<table class="models">
<thead><tr><th>table</th><th>description</th><th class="number">rows</th><th>read by</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>`;
}

function footer(site: SiteData): string {
  return `<footer class="muted">Written by <code>exledger docs</code> at ${formatInstant(site.generatedAt)}.</footer>`;
}

function modelLinks(ids: readonly string[]): string {
  if (ids.length === 0) return '<span class="muted">none</span>';
  return `<ul class="links">${ids.map((id) => `<li><a href="${h(`../${nodePage(id)}`)}"><code>${h(id)}</code></a></li>`).join('')}</ul>`;
}

function columnRows(columns: readonly SiteColumn[], declaredModel: boolean): string {
  return columns
    .map(
      (column) =>
        `<tr data-column="${h(column.name)}"><td><code>${h(column.name)}</code>${column.key ? ' <span class="tag">key</span>' : ''}${column.declared || !declaredModel ? '' : ' <span class="tag fail">not declared</span>'}</td><td><code>${column.type === null ? '<span class="muted">not built</span>' : h(column.type)}</code></td><td>${column.description === null ? '<span class="muted">none</span>' : h(column.description)}</td><td>${column.unit === null ? '' : h(column.unit)}</td></tr>`,
    )
    .join('\n');
}

function renderTest(site: SiteData, model: SiteModel | undefined, test: SiteTest): string {
  const last = test.last;
  let result: string;
  if (last === null) result = '<span class="status not-run">not run yet</span>';
  else {
    const what = last.status === 'pass' ? 'pass' : last.status === 'fail' ? `fail: ${countOf(last.offending, 'offending row')}` : `error: ${h(last.message ?? 'the query could not run')}`;
    result = `<span class="status ${last.status}">${what}</span>`;
  }
  const when = last === null ? '' : formatInstant(last.checkedAt);
  const stale = last !== null && model?.builtAt != null && model.builtAt > last.checkedAt ? ' <span class="muted">(before the last build)</span>' : '';
  return `<tr data-test="${h(test.id)}" data-status="${last?.status ?? 'not-run'}"><td><code>${h(test.id)}</code><details><summary>SQL</summary><pre>${h(test.sql.trim())}</pre></details></td><td>${test.kind}</td><td>${result}</td><td class="number">${last === null ? '' : formatCount(last.offending)}</td><td>${when}${stale}</td><td><code>${h(test.file)}</code></td></tr>`;
}

function renderModel(site: SiteData, model: SiteModel): string {
  const columns = columnRows(model.columns, model.declared);
  const notDeclared = model.declared ? '' : `<p class="notice">not declared: no declaration in <code>sql/${model.layer}/_models.ts</code>; the columns are as the database has them.</p>`;
  const facts = [
    ['rows', `<span class="rows">${formatRows(model.rows)}</span>`],
    ['grain', model.grain === null ? '<span class="muted">not declared</span>' : h(model.grain)],
    ['key', model.key.length === 0 ? '<span class="muted">not declared</span>' : model.key.map((column) => `<code>${h(column)}</code>`).join(', ')],
    ...(model.tags.length === 0 ? [] : [['tags', model.tags.map((tag) => `<span class="tag">${h(tag)}</span>`).join(' ')]]),
    ['built', model.builtAt === null ? '<span class="muted">unknown</span>' : formatInstant(model.builtAt)],
    ['file', `<code>${h(model.file)}</code>`],
  ]
    .map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`)
    .join('');
  const tests = model.tests.length === 0 ? '<p class="muted">No tests read this model.</p>' : `<table class="tests">
<thead><tr><th>test</th><th>kind</th><th>last result</th><th class="number">offending</th><th>when</th><th>written in</th></tr></thead>
<tbody>
${model.tests.map((test) => renderTest(site, model, test)).join('\n')}
</tbody>
</table>`;
  return page(
    `${model.id}: exledger`,
    '../',
    `<header>
<p class="crumbs"><a href="../index.html">exledger</a> / <a href="../index.html#${model.layer}">${model.layer}</a></p>
<h1><code>${h(model.id)}</code> <small>${model.materialization}</small></h1>
<p class="description">${model.description === null ? '<span class="muted">No description.</span>' : h(model.description)}</p>
${notDeclared}
<dl class="facts">${facts}</dl>
</header>
<main>
<section id="lineage">
<h2>Lineage</h2>
${lineageSvg(site, '../', model)}
<div class="neighbours"><div><h3>Upstream <small>what it reads</small></h3>${modelLinks([...model.sources, ...model.upstream])}</div><div><h3>Downstream <small>what reads it</small></h3>${modelLinks(model.downstream)}</div></div>
</section>
<section id="columns">
<h2>Columns <small>${model.columns.length}</small></h2>
<table class="columns">
<thead><tr><th>column</th><th>type</th><th>description</th><th>unit</th></tr></thead>
<tbody>
${columns}
</tbody>
</table>
</section>
<section id="tests">
<h2>Tests <small>${model.tests.length}</small></h2>
<p class="muted">${checkLine(site)}</p>
${tests}
</section>
<section id="sql">
<h2>${model.file.endsWith('.ts') ? 'Code (a model computed in TypeScript)' : 'SQL'} <small><code>${h(model.file)}</code></small></h2>
<pre class="sql">${h(model.sql.trimEnd())}</pre>
</section>
</main>
${footer(site)}`,
  );
}

function renderSource(site: SiteData, source: SiteSource): string {
  const facts = [
    ['rows', `<span class="rows">${source.rows === null ? '<span class="muted">not synced</span>' : formatCount(source.rows)}</span>`],
    ['stream', `<code>${h(source.name)}</code> (<code>pipelines/</code>, synced by <code>exledger sync</code>)`],
  ]
    .map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`)
    .join('');
  return page(
    `${source.id}: exledger`,
    '../',
    `<header>
<p class="crumbs"><a href="../index.html">exledger</a> / <a href="../index.html#raw">raw</a></p>
<h1><code>${h(source.id)}</code> <small>raw table</small></h1>
<p class="description">${source.description === null ? '<span class="muted">No description.</span>' : h(source.description)}</p>
<dl class="facts">${facts}</dl>
</header>
<main>
<section id="lineage">
<h2>Lineage</h2>
${lineageSvg(site, '../', source)}
<div class="neighbours"><div><h3>Upstream <small>what it reads</small></h3><span class="muted">the exchange</span></div><div><h3>Downstream <small>what reads it</small></h3>${modelLinks(source.downstream)}</div></div>
</section>
<section id="columns">
<h2>Columns <small>${source.columns.length}</small></h2>
${source.columns.length === 0 ? '<p class="muted">Not in this database: the stream was never synced.</p>' : `<table class="columns">
<thead><tr><th>column</th><th>type</th><th>description</th><th>unit</th></tr></thead>
<tbody>
${columnRows(source.columns, true)}
</tbody>
</table>`}
</section>
</main>
${footer(site)}`,
  );
}

const STYLE = `:root { --ink: #1f2328; --muted: #656d76; --line: #d0d7de; --bg: #ffffff; --soft: #f6f8fa;
  --staging: #ddeafb; --staging-line: #4a7fb5; --intermediate: #fcefd6; --intermediate-line: #b7832a;
  --marts: #dcf1e2; --marts-line: #3c8d57; --raw: #eceff3; --raw-line: #6e7781; --pass: #1a7f37; --fail: #cf222e; --error: #9a6700; }
* { box-sizing: border-box; }
body { margin: 0 auto; padding: 24px 32px 48px; max-width: 1400px; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: var(--bg); }
h1 { font-size: 24px; margin: 4px 0 8px; } h2 { font-size: 18px; margin: 28px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h1 code { font-size: inherit; } h3 { font-size: 14px; margin: 12px 0 4px; } small { color: var(--muted); font-weight: normal; font-size: 13px; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
a { color: #0969da; text-decoration: none; } a:hover { text-decoration: underline; }
.muted { color: var(--muted); } .crumbs { margin: 0; color: var(--muted); }
.description { font-size: 15px; max-width: 900px; }
.notice { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px; padding: 6px 10px; max-width: 900px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
table { border-collapse: collapse; width: 100%; margin: 6px 0; }
th, td { text-align: left; vertical-align: top; padding: 5px 10px; border-bottom: 1px solid var(--line); }
th { background: var(--soft); font-weight: 600; } td.number, th.number { text-align: right; white-space: nowrap; }
table.models td:first-child, table.columns td:first-child { white-space: nowrap; }
.status { display: inline-block; border-radius: 10px; padding: 0 8px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.status.pass { background: #dafbe1; color: var(--pass); } .status.fail { background: #ffebe9; color: var(--fail); }
.status.error { background: #fff8c5; color: var(--error); } .status.not-run { background: var(--soft); color: var(--muted); }
strong.fail, .tag.fail { color: var(--fail); }
.tag { font-size: 11px; border: 1px solid var(--line); border-radius: 8px; padding: 0 6px; color: var(--muted); }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; overflow: auto; line-height: 1.4; }
details summary { cursor: pointer; color: var(--muted); font-size: 12px; }
.graph { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; background: #fcfcfd; padding: 4px; }
.neighbours { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
ul.links { margin: 0; padding-left: 18px; }
svg.lineage { display: block; max-width: 100%; height: auto; font-family: "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace; font-size: 12px; }
svg.lineage .layer-heading { font-family: system-ui, "DejaVu Sans", sans-serif; font-size: 12px; font-weight: 600; fill: var(--muted); text-transform: uppercase; letter-spacing: 0.05em; }
svg.lineage .edge { fill: none; stroke: #8c959f; stroke-width: 1; opacity: 0.55; }
svg.lineage .edge.focus { stroke: #1f2328; stroke-width: 1.6; opacity: 0.9; }
svg.lineage .node rect { stroke-width: 1; } svg.lineage .node text { fill: var(--ink); }
svg.lineage .node.raw rect { fill: var(--raw); stroke: var(--raw-line); }
svg.lineage .node.staging rect { fill: var(--staging); stroke: var(--staging-line); }
svg.lineage .node.intermediate rect { fill: var(--intermediate); stroke: var(--intermediate-line); }
svg.lineage .node.marts rect { fill: var(--marts); stroke: var(--marts-line); }
svg.lineage .node.focus rect { stroke: var(--ink); stroke-width: 2.5; }
svg.lineage .node.focus text { font-weight: bold; }
svg.lineage a:hover rect { stroke-width: 2; }
footer { margin-top: 40px; font-size: 12px; }
`;
