#!/usr/bin/env node
// Launcher: registers tsx so the TypeScript sources run as they are (no build step, so
// `npx exledger` works right after `npm ci`), then hands over to the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./main.ts');
const code = await main(process.argv.slice(2));
// Exit explicitly: idle keep-alive sockets must not hold a finished command open.
process.exit(code);
