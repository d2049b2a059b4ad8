#!/usr/bin/env node
// Bundles the CLI's TypeScript sources into one ES module (src/cli/.launch.bundle.mjs) that Node
// loads as it is: `exledger` then starts in about 0.7 s instead of 1.2 s (tsx transforms and
// resolves each of some 150 source files at every start, which a nightly build on a large history
// pays for on top of its models). Run by `npm ci` (the prepare script); the packages stay outside
// the bundle, loaded from node_modules. The bundle sits in src/cli, two levels below the
// repository like every source file that finds its way by import.meta.url (../../sql,
// ../../package.json, ./exledger.js), so those paths mean the same from it.
// Beside it, .launch.bundle.json lists the files it was made from: the launcher (exledger.js)
// uses the bundle only while none of them is newer than it, and runs the sources through tsx
// otherwise (an edited checkout never runs stale code; `npm run bundle` makes it fast again).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outfile = path.join(repo, 'src/cli/.launch.bundle.mjs');
try {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [path.join(repo, 'src/cli/launch.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile,
    metafile: true,
    logLevel: 'warning',
  });
  const inputs = Object.keys(result.metafile.inputs).map((input) => path.relative(repo, path.resolve(process.cwd(), input)));
  writeFileSync(path.join(repo, 'src/cli/.launch.bundle.json'), `${JSON.stringify({ inputs }, null, 1)}\n`);
  console.log(`exledger: bundled ${inputs.length} source files into ${path.relative(repo, outfile)}`);
} catch (error) {
  // Not fatal: without a bundle the launcher runs the sources through tsx (slower to start).
  console.warn(`exledger: could not bundle the sources (${error.message}); the CLI runs them through tsx instead`);
}
