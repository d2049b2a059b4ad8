/**
 * The documentation's quoted outputs are what the commands print (scripts/docs-outputs.ts): each
 * block after `<!-- output: name -->` in README.md and docs/*.md equals a fresh capture, made
 * once for all blocks (one sandbox in its own process, the commands as child processes without a
 * terminal), and each block after `<!-- file: path -->` equals that repository file. A block that
 * differs fails with the command to run: `npm run docs:outputs` rewrites them all.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  asBlockBody,
  captureOutputs,
  documentationFiles,
  excerpt,
  expectedBody,
  findMarkedBlocks,
  maskColumn,
  normaliseOutput,
  replaceMarkedBlocks,
  REPO,
  stopCaptures,
  UNAVAILABLE_CAPTURES,
} from '../scripts/docs-outputs.ts';

const FIX = 'run npm run docs:outputs to regenerate it from a fresh run';

describe('marked blocks (scripts/docs-outputs.ts)', () => {
  const markdown = ['# Title', '', '<!-- output: one -->', '```text', 'old', '```', '', '```sh', '<!-- output: inside-a-fence -->', '```', '<!-- file: deploy/crontab -->', '```cron', '```', ''].join('\n');

  it('finds the fenced block after each marker, not a marker inside another fence', () => {
    const blocks = findMarkedBlocks(markdown);
    expect(blocks.map(({ kind, name, line, body }) => ({ kind, name, line, body }))).toEqual([
      { kind: 'output', name: 'one', line: 3, body: 'old\n' },
      { kind: 'file', name: 'deploy/crontab', line: 11, body: '' },
    ]);
  });

  it('replaces only the bodies, leaving the fences, languages and the text around them', () => {
    const replaced = replaceMarkedBlocks(markdown, (block) => (block.kind === 'output' ? 'new  \nlines\n\n' : undefined));
    expect(replaced).toBe(markdown.replace('```text\nold\n```', '```text\nnew\nlines\n```'));
    expect(findMarkedBlocks(replaced)[0]!.body).toBe('new\nlines\n');
  });

  it('refuses a marker without a block right after it, or a block never closed', () => {
    expect(() => findMarkedBlocks('<!-- output: x -->\n\n```text\n```\n', 'a.md')).toThrow('a.md:1');
    expect(() => findMarkedBlocks('<!-- output: x -->\n```text\nno end\n', 'a.md')).toThrow('never closed');
  });

  it('normalises what differs between runs, and leaves the history and the counts', () => {
    const volatile = { folders: ['/tmp/exledger-docs-Ab12'], historyEndMs: Date.parse('2026-11-01T00:00:00Z') };
    const text = [
      'exledger run: database /tmp/exledger-docs-Ab12/data/x.duckdb, log /tmp/exledger-docs-Ab12/logs/run-20261126T182723.434Z-10516.log',
      'sync 20261126T182616-5518c5: ok, 365 windows, 12 streams',
      'drift in main/spot_fills: (first seen 2026-11-26T18:26:16.161Z, sync 20261126T182616-551815)',
      'synced until 2026-11-26T18:26:16.161Z, history to 2026-10-20T00:00:00.000Z, a fill at 2026-09-22T09:17:31.831Z',
      '[ 1/45] ok      macros/dates      macro   0.01 s',
      '[ 2/45] ok      macros/exact      macro  12.31 s',
      'build: 45 ok in 7.23 s; docs in 0.6 s; 2,111 rows; 4 sheets, 53 rows  2.1 s',
      'publish  ok          0.1 s  ./data/exledger.published.duckdb (13.1 MB)',
      'sandbox on http://127.0.0.1:45263, pid 7476',
    ].join('\n');
    expect(normaliseOutput(text, volatile).split('\n')).toEqual([
      'exledger run: database /srv/exledger/data/x.duckdb, log /srv/exledger/logs/run-20261102T021500.000Z-4242.log',
      'sync 20261102T021500-3fa2c1: ok, 365 windows, 12 streams',
      'drift in main/spot_fills: (first seen 2026-11-02T02:15:00.000Z, sync 20261102T021500-3fa2c1)',
      'synced until 2026-11-02T02:15:00.000Z, history to 2026-10-20T00:00:00.000Z, a fill at 2026-09-22T09:17:31.831Z',
      '[ 1/45] ok      macros/dates      macro  n.nn s',
      '[ 2/45] ok      macros/exact      macro  n.nn s',
      'build: 45 ok in n.nn s; docs in n.n s; 2,111 rows; 4 sheets, 53 rows  n.n s',
      'publish  ok  n.n s  ./data/exledger.published.duckdb (n.n MB)',
      'sandbox on http://127.0.0.1:8123, pid 4242',
    ]);
  });

  it('masks a column of durations by its header, keeping the alignment, and cuts long outputs', () => {
    const table = ['stream   rows  seconds', 'a          12      0.4', 'b        2111     15.7', 'note: a time 09:17:31.831Z'].join('\n');
    expect(maskColumn(table, 'seconds')).toBe(['stream   rows  seconds', 'a          12      n.n', 'b        2111      n.n', 'note: a time 09:17:31.831Z'].join('\n'));
    expect(excerpt('1\n2\n3\n4\n5\n6\n', 2, 1)).toBe('1\n2\n…\n6');
    expect(excerpt('1\n2\n3\n', 2, 1)).toBe('1\n2\n3');
    expect(asBlockBody('\n a \n\n')).toBe(' a\n');
  });
});

describe('the documentation quotes what the commands print and the files hold', () => {
  let captures: Map<string, string>;

  // About a minute on an idle machine (two cores); the limit leaves room for a loaded one.
  beforeAll(async () => {
    captures = await captureOutputs();
  }, 900_000);
  afterAll(() => stopCaptures());

  for (const file of documentationFiles()) {
    it(`${file}: every marked block is current`, () => {
      const blocks = findMarkedBlocks(readFileSync(path.join(REPO, file), 'utf8'), file);
      for (const block of blocks) {
        if (UNAVAILABLE_CAPTURES.has(block.name)) continue;
        expect(block.body, `${file}:${block.line} (${block.kind}: ${block.name}) differs: ${FIX}`).toBe(expectedBody(block, captures, file));
      }
    });
  }

  for (const [name, reason] of UNAVAILABLE_CAPTURES) it.skip(`the block of ${name} is current (skipped: ${reason})`, () => undefined);

  it('the guides quote the outputs a reader meets: every capture is quoted somewhere', () => {
    const quoted = new Set(documentationFiles().flatMap((file) => findMarkedBlocks(readFileSync(path.join(REPO, file), 'utf8'), file).map((block) => block.name)));
    expect([...captures.keys()].filter((name) => !quoted.has(name))).toEqual([]);
  });
});
