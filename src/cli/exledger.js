#!/usr/bin/env node
// Launcher: registers tsx so the TypeScript sources run as they are (no build step, so
// `npx exledger` works right after `npm ci`), then hands over to the CLI.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
