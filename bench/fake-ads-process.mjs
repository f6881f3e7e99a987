/**
 * The fake Google (src/demo/fakes/google.ts: OAuth server and Data Manager API) in its own process, so that answering
 * the service takes no CPU from the service being measured. The parent asks over IPC for the settings that point a
 * service at it, and for the events:ingest requests it received since an index.
 */
import { importTs } from './support/ts-module.mjs';

const { startFakeGoogle } = await importTs('src/demo/fakes/google.ts');
const fake = await startFakeGoogle();

const isIngest = (record) => record.method === 'POST' && record.path === '/v1/events:ingest';

/** What the benchmark needs of one events:ingest request: when it arrived, its answer, and each event's match keys. */
function summarise(record) {
  const events = Array.isArray(record.body?.events) ? record.body.events : [];
  return {
    receivedAt: record.receivedAt.getTime(),
    status: record.answeredStatus,
    problems: record.problems,
    conversions: events.map((e) => ({
      gclid: e.adIdentifiers?.gclid ?? null,
      transactionId: e.transactionId ?? null,
      hashedEmail: (e.userData?.userIdentifiers ?? []).find((u) => u.emailAddress)?.emailAddress ?? null,
    })),
  };
}

process.on('message', (message) => {
  try {
    if (message.type === 'env') {
      return process.send({
        id: message.id,
        result: {
          CNV_GOOGLE_DATA_MANAGER_API_BASE: fake.urls.apiBase,
          CNV_GOOGLE_OAUTH_AUTHORIZE_URL: fake.urls.authorize,
          CNV_GOOGLE_OAUTH_TOKEN_URL: fake.urls.token,
          CNV_GOOGLE_OAUTH_CLIENT_ID: fake.client.id,
          CNV_GOOGLE_OAUTH_CLIENT_SECRET: fake.client.secret,
        },
      });
    }
    if (message.type === 'count') {
      const ingests = fake.server.requests.filter(isIngest);
      const conversions = ingests.reduce((n, r) => n + (r.answeredStatus === 200 && Array.isArray(r.body?.events) ? r.body.events.length : 0), 0);
      return process.send({ id: message.id, result: { requests: ingests.length, conversions } });
    }
    if (message.type === 'doubles') {
      // Conversions the fake accepted more than once (one transactionId, the event action's, in two accepted uploads).
      const seen = new Map();
      for (const record of fake.server.requests.filter(isIngest)) {
        if (record.answeredStatus !== 200 || !Array.isArray(record.body?.events)) continue;
        for (const e of record.body.events) seen.set(e.transactionId, (seen.get(e.transactionId) ?? 0) + 1);
      }
      const doubled = [...seen.values()].reduce((n, count) => n + count - 1, 0);
      return process.send({ id: message.id, result: { distinct: seen.size, doubled } });
    }
    if (message.type === 'since') {
      return process.send({ id: message.id, result: fake.server.requests.filter(isIngest).slice(message.index).map(summarise) });
    }
    process.send({ id: message.id, error: `unknown message type ${message.type}` });
  } catch (error) {
    process.send({ id: message.id, error: String(error?.stack ?? error) });
  }
});
process.on('SIGTERM', () => fake.close().then(() => process.exit(0)));
process.send({ ready: true });
