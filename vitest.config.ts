import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // PGlite boots a WASM PostgreSQL per test file: give it room on a 2-core machine.
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
