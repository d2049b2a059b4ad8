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

const { register } = await import('tsx/esm/api');
register();
const { launch } = await import('./launch.ts');
// Not awaited here: an unsettled top-level await ends Node with exit 13 and no word. launch()
// owns the exit instead, and turns an unfinished command into an error line.
launch(process.argv.slice(2));
