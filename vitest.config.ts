import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds (or finds cached) one migrated PGlite image; tests clone it instead of running initdb and the migrations.
    globalSetup: ['test/support/global-setup.ts'],
    // The loader's optional scripts are ES modules; happy-dom cannot import a URL (see the setup file).
    setupFiles: ['test/support/module-loader.setup.ts'],
    // A test file's fresh PGlite is a load of that image (about a second); keep room for a busy 2-core machine.
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
