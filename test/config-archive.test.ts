import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config/config.ts';
import { ConfigError } from '../src/errors.ts';
import { tempDir } from './support/temp-dir.ts';

/** archive.dir (docs/operating.md "Archive and restore"): optional, from the file or EXLEDGER_ARCHIVE_DIR, validated like the others. */

function dirWithConfig(content: unknown): string {
  const dir = tempDir('exledger-config-archive-');
  writeFileSync(path.join(dir, 'exledger.config.json'), JSON.stringify(content));
  return dir;
}

function errorOf(work: () => unknown): ConfigError {
  try {
    work();
  } catch (error) {
    return error as ConfigError;
  }
  throw new Error('no error');
}

describe('archive.dir', () => {
  it('is none by default; the file sets it; EXLEDGER_ARCHIVE_DIR overrides it (an empty one is unset)', () => {
    expect(resolveConfig({}, {}, dirWithConfig({})).archive).toEqual({ dir: null });
    const dir = dirWithConfig({ archive: { dir: '/mnt/file-archive' } });
    expect(resolveConfig({}, {}, dir).archive.dir).toBe('/mnt/file-archive');
    expect(resolveConfig({}, { EXLEDGER_ARCHIVE_DIR: '/mnt/env-archive' }, dir).archive.dir).toBe('/mnt/env-archive');
    expect(resolveConfig({}, { EXLEDGER_ARCHIVE_DIR: '' }, dir).archive.dir).toBe('/mnt/file-archive');
  });

  it('a bad value is one error naming the key, with an example', () => {
    const empty = errorOf(() => resolveConfig({}, {}, dirWithConfig({ archive: { dir: ' ' } })));
    expect(empty).toBeInstanceOf(ConfigError);
    expect(empty.message).toBe('exledger.config.json: archive.dir: must not be empty');
    expect(empty.hint).toBe('e.g. archive.dir: "/mnt/exledger-archive" (an existing folder, on a mounted disk of its own)');
    const number = errorOf(() => resolveConfig({}, {}, dirWithConfig({ archive: { dir: 3 } })));
    expect(number.message).toMatch(/^exledger\.config\.json: archive\.dir: /);
    const typo = errorOf(() => resolveConfig({}, {}, dirWithConfig({ archive: { folder: '/mnt/x' } })));
    expect(typo.message).toMatch(/^exledger\.config\.json: archive: Unrecognized key: "folder"/);
    expect(typo.hint).toContain('the keys of archive are dir');
    const string = errorOf(() => resolveConfig({}, {}, dirWithConfig({ archive: '/mnt/x' })));
    expect(string.hint).toBe('e.g. archive: { "dir": "/mnt/exledger-archive" }');
  });
});
