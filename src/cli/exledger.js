#!/usr/bin/env node
// Launcher: registers tsx so the TypeScript sources run as they are (no build step, so
// `npx exledger` works right after `npm ci`), then hands over to the CLI.
// A stop sent while the CLI is still loading (seconds on a busy machine) would otherwise end it
// without a word: it is kept here, and the CLI handles it as soon as it can say so (main.ts).
const received = [];
const remember = (signal) => received.push(signal);
process.on('SIGINT', remember);
process.on('SIGTERM', remember);
process[Symbol.for('exledger.earlySignals')] = {
  received,
  stop: () => {
    process.off('SIGINT', remember);
    process.off('SIGTERM', remember);
  },
};

// The sources bundled by `npm ci` (scripts/bundle.mjs) start in 0.7 s instead of 1.2 s; they are used
// only while no file they were made from has changed since, else the sources run through tsx.
const { launch } = (await freshBundle()) ?? (await viaTsx());
// Not awaited here: an unsettled top-level await ends Node with exit 13 and no word. launch()
// owns the exit instead, and turns an unfinished command into an error line.
launch(process.argv.slice(2));

async function viaTsx() {
  const { register } = await import('tsx/esm/api');
  register();
  return import('./launch.ts');
}

async function freshBundle() {
  const { readFileSync, statSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const path = await import('node:path');
  const repo = fileURLToPath(new URL('../..', import.meta.url));
  try {
    const bundle = new URL('./.launch.bundle.mjs', import.meta.url);
    const made = statSync(bundle).mtimeMs;
    const { inputs } = JSON.parse(readFileSync(new URL('./.launch.bundle.json', import.meta.url), 'utf8'));
    if (inputs.some((input) => statSync(path.join(repo, input)).mtimeMs > made)) return undefined;
    return await import(bundle.href);
  } catch {
    // No bundle, or a file it was made from is gone: the sources, through tsx.
    return undefined;
  }
}
