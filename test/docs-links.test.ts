/**
 * The documentation renders as a set of linked pages: every relative link (and image) in
 * README.md and docs/ leads to a file of the repository, and every #anchor to a heading of its
 * page (GitHub's heading ids), so a moved section cannot leave a dead link behind. Each guide has
 * a table of contents: links to its own headings, right under its title.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../scripts/docs-outputs.ts';

/** README.md and every Markdown file under docs/ (docs/plans/ included). */
function markdownFiles(): string[] {
  const under = (folder: string): string[] =>
    readdirSync(path.join(REPO, folder), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? under(`${folder}/${entry.name}`) : entry.name.endsWith('.md') ? [`${folder}/${entry.name}`] : [],
    );
  return ['README.md', ...under('docs')].sort();
}

/** The text outside fenced blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return markdown
    .replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '')
    .split('\n')
    .map((line) => line.replace(/`[^`]*`/g, ''))
    .join('\n');
}

/** GitHub's id for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2. */
export function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

/** Every link and image target of a Markdown text: [text](target) and ![alt](target). */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!);
}

describe('links between the documentation pages', () => {
  it('headings get GitHub ids', () => {
    expect([...headingIds('# Reference: configuration, commands\n## Each command\'s help\n## The nightly job: `exledger run`\n## Totals\n## Totals\n')]).toEqual([
      'reference-configuration-commands',
      'each-commands-help',
      'the-nightly-job-exledger-run',
      'totals',
      'totals-1',
    ]);
  });

  for (const file of markdownFiles()) {
    it(`${file}: every relative link leads to a file, and every anchor to a heading`, () => {
      const markdown = readFileSync(path.join(REPO, file), 'utf8');
      const dead: string[] = [];
      for (const target of linkTargets(markdown)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not ours to check
        const [where, anchor] = target.split('#') as [string, string | undefined];
        const resolved = where === '' ? path.join(REPO, file) : path.resolve(path.dirname(path.join(REPO, file)), decodeURIComponent(where));
        if (!resolved.startsWith(REPO) || !existsSync(resolved)) {
          dead.push(`${target}: no such file`);
          continue;
        }
        if (anchor !== undefined && anchor !== '') {
          if (!statSync(resolved).isFile() || !resolved.endsWith('.md')) dead.push(`${target}: an anchor into something that is not a Markdown page`);
          else if (!headingIds(readFileSync(resolved, 'utf8')).has(anchor)) dead.push(`${target}: no heading with that id`);
        }
      }
      expect(dead).toEqual([]);
    });
  }

  for (const file of markdownFiles().filter((name) => /^docs\/[^/]+\.md$/.test(name))) {
    it(`${file}: opens with a table of contents of its sections`, () => {
      const markdown = readFileSync(path.join(REPO, file), 'utf8');
      const sections = markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').split('\n').filter((line) => line.startsWith('## ')).length;
      const contents = markdown.split('\n## ')[0]!;
      const entries = [...contents.matchAll(/^- \[[^\]]+\]\(#([^)]+)\)$/gm)].map((match) => match[1]!);
      expect(entries.length, `${file} has ${sections} sections`).toBeGreaterThanOrEqual(sections);
    });
  }
});
