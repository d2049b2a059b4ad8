#!/usr/bin/env node
// Launcher: registers tsx so the TypeScript sources run as they are (no build step, so
// `npx exledger` works right after `npm ci`), then hands over to the CLI.
import { register } from 'tsx/esm/api';

register();
const { launch } = await import('./launch.ts');
// Not awaited here: an unsettled top-level await ends Node with exit 13 and no word. launch()
// owns the exit instead, and turns an unfinished command into an error line.
launch(process.argv.slice(2));
