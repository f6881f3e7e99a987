/**
 * Connection test results kept briefly, so the test's post can redirect to a page that shows its result (post, then
 * redirect, then get): reloading that page shows the result again and tests nothing. A result is kept in this process
 * for TEST_OUTCOME_TTL_MS under a random key and shown only to the session that ran the test; another instance behind
 * the same store does not have it, and its page says to test again.
 */
import { randomBytes } from 'node:crypto';
import type { TestOutcome } from './pages/destinations';

/** How long a connection test's result can be shown again. */
export const TEST_OUTCOME_TTL_MS = 10 * 60 * 1000;
/** The most results kept at once (the oldest go first). */
const MAX_KEPT = 1000;

interface Kept {
  owner: string;
  outcome: TestOutcome;
  until: number;
}

export class TestOutcomes {
  private readonly kept = new Map<string, Kept>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Keeps an outcome for the session `owner` names; returns the key its page's address carries. */
  keep(owner: string, outcome: TestOutcome): string {
    this.drop();
    while (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value as string);
    const key = randomBytes(12).toString('base64url');
    this.kept.set(key, { owner, outcome, until: this.now() + TEST_OUTCOME_TTL_MS });
    return key;
  }

  /** The outcome kept under `key` for `owner`, or undefined (unknown, another session's, or too old). */
  find(owner: string, key: string): TestOutcome | undefined {
    const kept = this.kept.get(key);
    if (!kept || kept.owner !== owner || kept.until <= this.now()) return undefined;
    return kept.outcome;
  }

  private drop(): void {
    const now = this.now();
    for (const [key, kept] of this.kept) if (kept.until <= now) this.kept.delete(key);
  }
}
