import { accessSync, constants, existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { diskFullOf } from '../disk-full.ts';
import { ConfigError } from '../errors.ts';
import { removeLeftoverExports } from '../export/write-dataset.ts';
import { syncDirectory } from '../store/publish.ts';

/**
 * The documentation site's folder, only ever replaced whole (as the dataset export's): written
 * into `.<name>.tmp-<pid>` beside it, then swapped in by rename. Its mark is `_docs.json`, so a
 * later `exledger docs` replaces an earlier site and nothing else.
 */

/** The file that marks a folder as a documentation site (and describes it, for scripts). */
export const SITE_MARK = '_docs.json';

/**
 * Checks the site's folder before anything is read: its parent is an existing, writable folder,
 * and the folder itself, if there, is an earlier site (it has {@link SITE_MARK}) or empty.
 * @throws ConfigError naming the folder and the fix.
 */
export function requireSiteFolder(out: string, setting: string): void {
  const folder = path.resolve(out);
  const parent = path.dirname(folder);
  if (parent === folder) throw new ConfigError(folder, 'is the root of the filesystem: the site replaces its folder whole', { hint: `choose a folder of its own (${setting})` });
  if (!existsSync(parent)) throw new ConfigError(folder, `cannot be written: its parent folder ${parent} does not exist`, { hint: `create ${parent} first, or choose another folder (${setting})` });
  if (!statSync(parent).isDirectory()) throw new ConfigError(folder, `cannot be written: ${parent} is a file, not a folder`, { hint: `choose another folder (${setting})` });
  try {
    accessSync(parent, constants.W_OK | constants.X_OK);
  } catch {
    throw new ConfigError(folder, `cannot be written: ${parent} is not writable (the site is written beside it, then renamed into place)`, { hint: `make it writable for this user, or choose another folder (${setting})` });
  }
  if (!existsSync(folder)) return;
  if (!statSync(folder).isDirectory()) throw new ConfigError(folder, 'is a file, not a folder', { hint: `choose another folder (${setting}), or move the file away` });
  if (!existsSync(path.join(folder, SITE_MARK)) && readdirSync(folder).length > 0) {
    throw new ConfigError(folder, `is a folder with other things in it (no ${SITE_MARK}): the site replaces its folder whole, so it only replaces an earlier site`, {
      hint: `choose a new or empty folder (${setting})`,
    });
  }
}

/**
 * Writes `files` (path relative to the folder → content) and the mark into a temporary folder
 * beside `out`, then swaps it in: the previous site renamed aside, the new one renamed to `out`,
 * the previous one deleted. A failure removes the temporary folder and leaves the previous site.
 * Leftovers of a killed run (their process gone) are removed first.
 */
export async function writeSite(out: string, files: ReadonlyMap<string, string>, mark: unknown): Promise<void> {
  const folder = path.resolve(out);
  const base = path.basename(folder);
  // The same names as the dataset export's, so its clean-up of killed runs serves both.
  const temporary = path.join(path.dirname(folder), `.${base}.tmp-${process.pid}`);
  const previous = path.join(path.dirname(folder), `.${base}.old-${process.pid}`);
  await removeLeftoverExports(folder);
  await rm(temporary, { recursive: true, force: true });
  await mkdir(temporary);
  try {
    for (const [relative, content] of [...files, [SITE_MARK, `${JSON.stringify(mark, null, 2)}\n`] as const]) {
      const file = path.join(temporary, relative);
      await mkdir(path.dirname(file), { recursive: true });
      const handle = await open(file, 'wx');
      try {
        await handle.writeFile(content);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
    const hadPrevious = existsSync(folder);
    if (hadPrevious) await rename(folder, previous);
    await rename(temporary, folder);
    await syncDirectory(path.dirname(folder));
    if (hadPrevious) await rm(previous, { recursive: true, force: true });
  } catch (error) {
    await rm(temporary, { recursive: true, force: true });
    throw diskFullOf(error, { file: folder, doing: 'writing the documentation site', kept: 'the previous site in that folder is unchanged and no partial site is left' }) ?? error;
  }
}
