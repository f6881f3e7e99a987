/**
 * A kill -9 while notifications are in flight loses none: a worker in a child process takes every pending message
 * (the receiver holds each request without answering), the child is killed with SIGKILL, and a worker started
 * afterwards (its clock past the dead worker's leases) delivers every one of them. On PostgreSQL, where several
 * processes share the outbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/server/db/db';
import { migrate } from '../../src/server/db/migrations';
import { loadSettings } from '../../src/server/settings';
import { insertAccount } from '../../src/server/accounts/sql';
import { serviceSecretBox } from '../../src/server/db/secret-box';
import { enqueueNotification, insertEndpoint, newEndpointSecret, startNotificationWorker } from '../../src/server/notifications';
import { memoryLog } from './delivery/fixtures';
import { startReceiver, type Receiver } from './support/receiver';
import { bundleChild, type BundledChild } from './support/bundle-child';

const serverUrl = process.env.TEST_DATABASE_URL;
const SECRET_KEY = '9'.repeat(64);
const MESSAGES = 5;

describe.skipIf(!serverUrl)('notifications survive a kill -9 (PostgreSQL)', () => {
  let db: Database;
  let url: string;
  let bundle: BundledChild;
  let receiver: Receiver;
  let child: ChildProcess | null = null;

  beforeAll(async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    url = `${serverUrl}${serverUrl!.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    db = await openDatabase({ databaseUrl: url });
    await migrate(db);
    receiver = await startReceiver();
    bundle = await bundleChild(join(__dirname, 'support', 'notifier-child.ts'), 'notifier');
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await Promise.all([db.close(), receiver.close()]);
    bundle?.remove();
  });

  it('delivers every message a killed worker had in flight', async () => {
    const settings = loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: SECRET_KEY });
    const account = await insertAccount(db, 'Kill');
    await insertEndpoint(db, account.id, receiver.url, ['event.failed'], serviceSecretBox(settings).seal(newEndpointSecret()));
    for (let i = 0; i < MESSAGES; i++) {
      await enqueueNotification(db, account.id, 'event.failed', { site_id: null, event_id: `evt_${i}`, reason: 'test' });
    }
    receiver.answers.push(...Array<'hang'>(MESSAGES).fill('hang'));
    child = spawn(process.execPath, [bundle.file], {
      cwd: process.cwd(),
      env: { ...process.env, CHILD_DATABASE_URL: url, CHILD_SECRET_KEY: SECRET_KEY },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // Every message is in flight in the child (the receiver holds each request).
    while (receiver.received.length < MESSAGES) {
      if (child.exitCode !== null) throw new Error(`the child worker exited (${child.exitCode}) before taking every message`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    child = null;
    const pending = await db.query<{ status: string; locked: boolean }>(`select status, locked_until is not null as locked from notifications`);
    expect(pending).toHaveLength(MESSAGES);
    expect(pending.every((r) => r.status === 'pending' && r.locked)).toBe(true);

    // A new worker, once the dead worker's leases have run out, sends them all.
    const later = new Date(Date.now() + 5 * 60_000);
    const worker = startNotificationWorker({ db, settings, log: memoryLog(), autoStart: false, now: () => later });
    try {
      expect(await worker.drain()).toBe(MESSAGES);
    } finally {
      await worker.stop();
    }
    const rows = await db.query<{ status: string; event_id: string }>(`select status, payload -> 'data' ->> 'event_id' as event_id from notifications order by id`);
    expect(rows).toEqual(Array.from({ length: MESSAGES }, (_, i) => ({ status: 'delivered', event_id: `evt_${i}` })));
    const ids = new Set(receiver.received.slice(0, MESSAGES).map((r) => r.headers['webhook-id']));
    expect(new Set(receiver.received.slice(MESSAGES).map((r) => r.headers['webhook-id']))).toEqual(ids);
  });
});
