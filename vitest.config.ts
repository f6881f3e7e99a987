import { defineConfig } from 'vitest/config';
import { KnownDurationsSequencer } from './test/support/sequencer';

export default defineConfig({
  // The loader's sources are tested as the full core runs them: with the form triggers (src/loader/start.ts).
  define: { LOADER_FORMS: 'true' },
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
    // Vitest's default for a run is one worker fewer than the cores: one worker on a 2-core machine, which left a core
    // idle while a file waited on PGlite's load, a child process or PostgreSQL. Two workers took the suite from 1,392 s
    // to 754 s side by side on the same busy machine (load 10-16); tests never assume they run alone.
    maxWorkers: 2,
    // Each worker keeps one process and its module cache for all the files it runs, instead of a fresh process that
    // imports Fastify, PGlite and happy-dom again for every file (about a second a file, over 150 files). Test files
    // share no state through it: each makes its own stores, services and pages, and resets what it changes. A worker
    // keeps its process only while the next file has the same environment: the sequencer runs the node files first,
    // then the happy-dom ones.
    isolate: false,
    // Longest first by committed durations, also where vitest has no results of an earlier run, the node files before
    // the happy-dom ones (test/support/sequencer.ts).
    sequence: { sequencer: KnownDurationsSequencer },
  },
});
