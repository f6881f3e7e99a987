/**
 * A 200 still means stored with the embedded store on its own thread: the real service runs in a child process on a
 * data directory (PGlite on a worker thread), signed reports stream in from twenty senders at once, the child is killed
 * with SIGKILL while reports are in flight, and the store, opened again the way a restarted service opens it, holds
 * every report that was answered 200, each once with its event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../src/server/db/db';
import { openStore } from '../../src/server/db/open-store';
import { insertAccount } from '../../src/server/accounts/sql';
import { insertSite, type SiteRow } from '../../src/server/api/sites/sql';
import { connectApiTrigger, insertApiFlow, signedReport } from './support/fixtures';
import { parseSecretKey, secretBox } from '../../src/server/db/secret-box';
import { seededDataDir } from '../support/pglite';
import { fanOutPendingReports, type FanOutResult } from '../../src/server/webhook/deferred-fanout';
import { bundleChild, type BundledChild } from './support/bundle-child';

const SECRET = 'whsec_kill_test_0000000000000000000000';
const SECRET_KEY = '7'.repeat(64);
const SENDERS = 20;
/** Reports answered 200 before the kill: enough for many group-committed batches. */
const ANSWERED_BEFORE_KILL = 150;

describe('the embedded store on its own thread survives a kill -9', () => {
  let dataDir: string;
  let bundle: BundledChild;
  let site: SiteRow;
  let child: ChildProcess | null = null;

  beforeAll(async () => {
    dataDir = await seededDataDir('cnv-kill-');
    const db = await openDatabase({ dataDir });
    site = await insertSite(db, (await insertAccount(db, 'Kill')).id);
    // Sealed with the child's key; the child's start leaves a sealed value as it is.
    await connectApiTrigger(db, site, SECRET, undefined, secretBox(parseSecretKey(SECRET_KEY)));
    await insertApiFlow(db, site, { triggerKey: 'signup' });
    await db.close();
    bundle = await bundleChild(join(__dirname, 'support', 'service-child.ts'), 'service-child');
  });
  afterAll(() => {
    child?.kill('SIGKILL');
    bundle?.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every report it answered 200, each once with its event', async () => {
    child = spawn(process.execPath, [bundle.file], {
      cwd: process.cwd(),
      env: { ...process.env, CHILD_DATA_DIR: dataDir, CHILD_SECRET_KEY: SECRET_KEY },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const base = await new Promise<string>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const url = /listening (\S+)/.exec(out)?.[1];
        if (url) resolve(url);
      });
      child!.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening`)));
    });

    const answered: string[] = [];
    let next = 0;
    let killed = false;
    const killedChild = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
    const sender = async () => {
      while (!killed) {
        const id = `kill-${next++}`;
        const request = signedReport(site.site_key, 'signup', { customer_event_id: id, correlation_token: null, allow_uncorrelated: true }, SECRET);
        const response = await fetch(`${base}${request.url}`, { method: 'POST', headers: request.headers, body: request.payload }).catch(() => null);
        if (response?.status === 200) answered.push(id);
        else if (response && !killed) throw new Error(`report ${id} answered ${response.status}: ${await response.text()}`);
        if (answered.length >= ANSWERED_BEFORE_KILL && !killed) {
          // The other senders' reports are in flight now.
          killed = true;
          child!.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: SENDERS }, sender));
    await killedChild;
    child = null;
    expect(answered.length).toBeGreaterThanOrEqual(ANSWERED_BEFORE_KILL);

    // Opened as a restarted service opens it (the dead process's lock is stale; PGlite recovers from its WAL).
    const store = await openStore({ dataDir, databaseUrl: undefined }, 'the test');
    try {
      // Reports a burst stored first wait for their events (webhook/deferred-fanout.ts): a restarted service's first
      // sweep builds them; the same here. None may be lost or half-built either way.
      let pass: FanOutResult;
      do pass = await fanOutPendingReports(store.db, { limit: 100 });
      while (pass.built === 100);
      const rows = await store.db.query<{ customer_event_id: string; events: number }>(
        `select r.customer_event_id, (select count(*)::int from events e where e.report_id = r.id) as events
         from reports r where r.site_id = $1`,
        [site.id],
      );
      const stored = new Map(rows.map((r) => [r.customer_event_id, r.events]));
      expect(answered.filter((id) => !stored.has(id))).toEqual([]);
      expect(answered.filter((id) => stored.get(id) !== 1)).toEqual([]);
      // Reports the kill cut off may be stored or not, but never half: every stored report has its event.
      expect(rows.filter((r) => r.events !== 1)).toEqual([]);
    } finally {
      await store.close();
    }
  }, 180_000);
});
