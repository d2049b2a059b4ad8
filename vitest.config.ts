import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The budget tests measure rates against a real clock: run files one at a time so they do
    // not compete for the machine's two cores.
    fileParallelism: false,
  },
});
