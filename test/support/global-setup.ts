/** Vitest global setup: makes sure the migrated PGlite image exists (built once, cached) and hands its paths to the workers. */
import type { TestProject } from 'vitest/node';
import { ensurePgliteImage, type PgliteImage } from './pglite-image';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteImage: PgliteImage;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  project.provide('pgliteImage', await ensurePgliteImage());
}
