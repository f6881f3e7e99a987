/** A notification worker in a process of its own (bundled by the kill -9 test): the database and key come from the environment. */
import { openDatabase } from '../../../src/server/db/db';
import { loadSettings } from '../../../src/server/settings';
import { startNotificationWorker } from '../../../src/server/notifications';

const db = await openDatabase({ databaseUrl: process.env.CHILD_DATABASE_URL! });
const settings = loadSettings({ CNV_DEMO_PORT: 'off', CNV_SECRET_KEY: process.env.CHILD_SECRET_KEY! });
startNotificationWorker({ db, settings, log: { info: () => undefined, warn: () => undefined, error: (o) => console.error(o) }, pollIntervalMs: 20, timeoutMs: 60_000 });
console.log('ready');
