import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/**
 * The temporary folders this test file made, removed after its last hook (a whole test run left
 * hundreds of them behind, the sync workspaces ~1.5 GB). Registered when the file imports this
 * module, so after the file's own afterAll hooks (they run in reverse order). The benchmarks
 * (`npm run bench`, not under vitest, where afterAll throws) remove them as the process exits.
 */
const made: string[] = [];
const removeMade = (): void => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
};
if (process.env.VITEST === undefined) process.on('exit', removeMade);
else afterAll(removeMade);

/** A new folder under the system's temporary folder, named `<prefix>XXXXXX`, removed after the file's tests. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
