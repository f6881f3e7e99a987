/**
 * Vitest setup for every test file: happy-dom has no module loader for URLs, so the loader's import of its optional
 * scripts (src/loader/import-module.ts) goes to test/loader/optional-modules.ts, which the loader tests drive. The
 * browser tests (e2e/) import the real scripts from the real service.
 */
import { vi } from 'vitest';

vi.mock('../../src/loader/import-module', () => import('../loader/optional-modules'));
