/**
 * The fake Google Ads API (src/demo/fake-google-ads.ts) in its own process, so that answering uploads takes no
 * CPU from the service being measured. The parent asks over IPC for its URL and for what it received since an index.
 */
import { importTs } from './support/ts-module.mjs';

const { startFakeGoogleAds } = await importTs('src/demo/fake-google-ads.ts');
const fake = await startFakeGoogleAds();

/** What the benchmark needs of one upload: when it arrived, its answer, and each conversion's match keys. */
function summarise(record) {
  const conversions = Array.isArray(record.body?.conversions) ? record.body.conversions : [];
  return {
    receivedAt: record.receivedAt.getTime(),
    status: record.answeredStatus,
    problems: record.problems,
    conversions: conversions.map((c) => ({
      gclid: c.gclid ?? null,
      orderId: c.orderId ?? null,
      hashedEmail: (c.userIdentifiers ?? []).find((u) => u.hashedEmail)?.hashedEmail ?? null,
    })),
  };
}

process.on('message', (message) => {
  try {
    if (message.type === 'url') return process.send({ id: message.id, result: fake.url });
    if (message.type === 'count') {
      const conversions = fake.requests.reduce((n, r) => n + (Array.isArray(r.body?.conversions) ? r.body.conversions.length : 0), 0);
      return process.send({ id: message.id, result: { requests: fake.requests.length, conversions } });
    }
    if (message.type === 'since') return process.send({ id: message.id, result: fake.requests.slice(message.index).map(summarise) });
    process.send({ id: message.id, error: `unknown message type ${message.type}` });
  } catch (error) {
    process.send({ id: message.id, error: String(error?.stack ?? error) });
  }
});
process.on('SIGTERM', () => fake.close().then(() => process.exit(0)));
process.send({ ready: true });
