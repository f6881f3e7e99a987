/**
 * Webhook benchmark (issue 4): signed saas-signup reports at N connections (each request signed afresh with the
 * current timestamp, distinct customer_event_ids, every other one correlated with a token whose snapshot the service
 * already stored), beside the bare route; then the delay from report to delivery through the Data Manager adapter
 * (the events:ingest request received by the fake Google), for a sample of reports sent at a moderate rate once the
 * load phase's deliveries have drained. `runDeliveryBenchmark` measures that delay alone, without the load phase.
 */
import { importTs } from './support/ts-module.mjs';
import { percentile, ratio, sumOf } from './support/stats.mjs';
import { formatTable, mark, num, times } from './support/table.mjs';
import { gclidFor, hashedEmailFor, newCorrelationToken, reportBody, snapshotBody } from './request-bodies.mjs';
import { bareRows, bracketBare, formatAttempts, formatUsage, ratioLine, settleCount, storeTitle, THROUGHPUT_HEADER, throughputRow } from './ingest.mjs';
import { SITE_ORIGIN, TRIGGER_KEY, setUpWebhookFlow } from './service-under-test.mjs';
import { withSteadyUsage } from './usage.mjs';
import { machineLine, withMachineTime } from './support/machine-time.mjs';

/** The targets of issue 4. */
export const WEBHOOK_TARGETS = { perSecond: 2000, p99Ms: 50, ofBare: 0.1, deliveryP99Ms: 1000 };

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the fake has received `expected` conversions, or made no progress for `stallMs`; returns the figures. */
async function waitForDeliveries(fakeAds, expected, { stallMs = 10_000, timeoutMs = 90_000 } = {}) {
  const start = Date.now();
  let { conversions } = await fakeAds.call({ type: 'count' });
  let progressAt = Date.now();
  while (conversions < expected && Date.now() - progressAt < stallMs && Date.now() - start < timeoutMs) {
    await sleep(200);
    const next = (await fakeAds.call({ type: 'count' })).conversions;
    if (next > conversions) progressAt = Date.now();
    conversions = next;
  }
  return { conversions, seconds: (Date.now() - start) / 1000 };
}

/**
 * Sends `count` reports one by one at `perSecond` (half correlated, their snapshots posted first) and returns, for each,
 * when it was sent and its match keys. Sent from this process: at a few dozen per second the cost is negligible.
 */
async function sendSample({ sut, secret, count, perSecond, protocol, hmac }) {
  const path = protocol.saasSignupPath(sut.site.site_key, TRIGGER_KEY);
  const tokens = Array.from({ length: Math.ceil(count / 2) }, () => newCorrelationToken());
  for (const token of tokens) {
    const response = await fetch(`${sut.base}${protocol.snapshotsPath(sut.site.site_key)}`, {
      method: 'POST',
      headers: { origin: SITE_ORIGIN, 'content-type': protocol.SNAPSHOT_CONTENT_TYPE },
      body: snapshotBody(token, SITE_ORIGIN),
    });
    if (response.status !== 204) throw new Error(`sample snapshot answered ${response.status}: ${await response.text()}`);
  }
  const sent = [];
  const failures = [];
  const interval = 1000 / perSecond;
  const started = performance.now();
  const inFlight = [];
  for (let i = 0; i < count; i++) {
    const wait = started + i * interval - performance.now();
    if (wait > 0) await sleep(wait);
    const customerEventId = `sample-${process.pid}-${i}`;
    const token = i % 2 === 0 ? tokens[i / 2] : null;
    const body = reportBody(customerEventId, token);
    const timestamp = hmac.unixSeconds();
    const signature = protocol.formatSignatureHeader(timestamp, [hmac.computeSignature(secret, timestamp, path, body)]);
    const sentAt = Date.now();
    const entry = { customerEventId, gclid: token ? gclidFor(token) : null, hashedEmail: hashedEmailFor(customerEventId), sentAt };
    inFlight.push(
      fetch(`${sut.base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [protocol.SIGNATURE_HEADER]: signature },
        body,
      }).then(async (response) => {
        const text = await response.text();
        if (response.status === 200) sent.push(entry);
        else failures.push(`${response.status} ${text.slice(0, 200)}`);
      }),
    );
  }
  await Promise.all(inFlight);
  return { sent, failures };
}

/**
 * Sends `count` reports at `rate` per second and times each from its sending to the events:ingest request that carried
 * it (matched by its gclid, or its hashed email when uncorrelated) at the fake Google.
 */
export async function measureDeliveryDelay({ sut, fakeAds, secret, count, rate, protocol, hmac }) {
  const { conversions: before, requests: sampleStart } = await fakeAds.call({ type: 'count' });
  const { result: [sampleRun, arrived], machine } = await withMachineTime(async () => {
    const sent = await sendSample({ sut, secret, count, perSecond: rate, protocol, hmac });
    return [sent, await waitForDeliveries(fakeAds, before + sent.sent.length, { stallMs: 5_000, timeoutMs: 30_000 })];
  });
  const ingests = await fakeAds.call({ type: 'since', index: sampleStart });
  const byGclid = new Map();
  const byEmail = new Map();
  for (const ingest of ingests) {
    for (const c of ingest.conversions) {
      if (c.gclid && !byGclid.has(c.gclid)) byGclid.set(c.gclid, ingest);
      if (c.hashedEmail && !byEmail.has(c.hashedEmail)) byEmail.set(c.hashedEmail, ingest);
    }
  }
  const delays = [];
  let unmatched = 0;
  for (const entry of sampleRun.sent) {
    const ingest = (entry.gclid && byGclid.get(entry.gclid)) || byEmail.get(entry.hashedEmail);
    if (ingest) delays.push(ingest.receivedAt - entry.sentAt);
    else unmatched++;
  }
  return {
    sample_sent: sampleRun.sent.length,
    sample_rate_per_s: rate,
    sample_failures: sampleRun.failures,
    delivered: delays.length,
    not_delivered: unmatched,
    rejected_uploads: ingests.filter((u) => u.status !== 200).length,
    problems: [...new Set(ingests.flatMap((u) => u.problems))].slice(0, 5),
    p50_ms: percentile(delays, 50),
    p99_ms: percentile(delays, 99),
    max_ms: delays.length ? Math.max(...delays) : Number.NaN,
    wait_s: arrived.seconds,
    machine,
    delays,
  };
}

/** The delivery target's verdict: every sampled report delivered, p99 under the target. */
function deliveryTarget(delivery, delays) {
  return {
    target: `delivery p99 < ${num(WEBHOOK_TARGETS.deliveryP99Ms)} ms`,
    value: delivery.p99_ms,
    met: delays.length === 0 ? false : delivery.not_delivered === 0 && delivery.p99_ms < WEBHOOK_TARGETS.deliveryP99Ms,
  };
}

/**
 * Report → delivered alone (no load phase): with the webhook secret of the Google Ads flow (set up here through the
 * OAuth handoff to the fake Google when not given), sends
 * `sample` reports at `sampleRate` per second, half correlated, and times each until the fake Google received it.
 */
export async function runDeliveryBenchmark({ sut, fakeAds, secret: given, sample = 100, sampleRate = 20 }) {
  const protocol = await importTs('src/protocol/index.ts');
  const hmac = await importTs('src/protocol/hmac-node.ts');
  const secret = given ?? (await setUpWebhookFlow(sut)).secret;
  const count = Math.max(2, sample);
  const delivery = await measureDeliveryDelay({ sut, fakeAds, secret, count, rate: sampleRate, protocol, hmac });
  const delays = delivery.delays;
  delete delivery.delays;
  return { delivery, targets: { delivery_p99: deliveryTarget(delivery, delays) } };
}

/** The delivery-delay table as text. */
function formatDelivery(d) {
  return [
    `== Delivery delay: report sent -> events:ingest received by the fake Google Data Manager API (${num(d.sample_sent)} reports at ${d.sample_rate_per_s}/s, half correlated) ==`,
    formatTable(['delivered', 'not delivered', 'rejected requests', 'p50 ms', 'p99 ms', 'max ms'], [[num(d.delivered), num(d.not_delivered), num(d.rejected_uploads), num(d.p50_ms), num(d.p99_ms), num(d.max_ms)]]),
    ...(d.sample_failures.length ? [`sample reports refused: ${d.sample_failures.length} (first: ${d.sample_failures[0]})`] : []),
    ...(d.problems?.length ? [`the fake found: ${d.problems.join('; ')}`] : []),
    ...('machine' in d ? [machineLine('the sample', d.machine)] : []),
  ];
}

/** The delivery benchmark's table as text. */
export function formatDeliveryResults(r) {
  const t = r.targets.delivery_p99;
  return [...formatDelivery(r.delivery), '', `target  ${t.target}: ${num(t.value)} ms -> ${mark(t.met)}`].join('\n');
}

/** Runs the webhook benchmark against a started service (domain set) with the fake Google Ads API behind it. */
export async function runWebhookBenchmark({ sut, loadgen, fakeAds, bareResult, bareAfter, secret: given, connections, duration, warmup, sample = 200, sampleRate = 50 }) {
  const protocol = await importTs('src/protocol/index.ts');
  const hmac = await importTs('src/protocol/hmac-node.ts');
  const secret = given ?? (await setUpWebhookFlow(sut)).secret;
  const path = protocol.saasSignupPath(sut.site.site_key, TRIGGER_KEY);
  const job = { kind: 'reports', url: sut.urls ?? sut.base, path, secret, connections, tag: `load-${Date.now()}`, returnIds: true };

  // Correlated reports use tokens whose snapshots the service stored (the ingest run leaves plenty); top up if short.
  const wanted = Math.ceil((WEBHOOK_TARGETS.perSecond * 1.5 * (warmup + duration)) / 2);
  const { tokens_left: tokensLeft } = await loadgen.call({ kind: 'tokens' });
  if (tokensLeft < wanted) {
    // A few seconds of snapshots, not an exact count: on a slow service an exact top-up could take minutes. Should the
    // pool run dry, later "correlated" slots go without a token, and the accounting below shows the real split.
    await loadgen.call({ kind: 'snapshots', url: sut.urls ?? sut.base, path: protocol.snapshotsPath(sut.site.site_key), origin: SITE_ORIGIN, connections, duration: 5 });
  }

  const before = { reports: await sut.countRows('reports'), events: await sut.countRows('events'), delivered: (await fakeAds.call({ type: 'count' })).conversions };
  const warm = await loadgen.call({ ...job, duration: warmup });
  // A burst's events are built after it, and delivered: a disturbed window is measured again only once that is done,
  // so each attempt starts from the same state (a service still building the last burst's events is slower).
  const waiting = async () => (await sut.sql('select count(*)::int as n from report_fanouts'))[0].n;
  const settle = async () => {
    await settleCount(waiting, 0, { quietMs: 10_000, timeoutMs: 120_000 });
    await waitForDeliveries(fakeAds, before.delivered + (await sut.countRows('events')) - before.events);
  };
  const { result: main, usage, results, attempts } = await withSteadyUsage(sut, 'webhook', () => loadgen.call({ ...job, duration }), settle);
  // Every run counts in the accounting: the warm-up, and each attempt at the window (measured again when disturbed).
  const runs = [warm, ...results];
  const answered = runs.flatMap((r) => r.answered_ids);
  const answered200 = answered.length;
  // Every customer_event_id answered 200 must be stored as a report (the count of all rows may be higher: requests in
  // flight when a timed run stops are completed by the service but not counted by autocannon).
  const reports = await sut.countPresent('reports', 'customer_event_id', answered);
  for (const r of runs) delete r.answered_ids;
  // A burst's signups are stored first and their events built after it (webhook/deferred-fanout.ts): wait for them.
  const buildStart = Date.now();
  const deferredAtEnd = await waiting();
  const stillWaiting = await settleCount(waiting, 0, { quietMs: 10_000, timeoutMs: 120_000 });
  const built = { deferred_at_end: deferredAtEnd, seconds: (Date.now() - buildStart) / 1000, still_waiting: stillWaiting };
  const events = (await settleCount(() => sut.countRows('events'), -1, { quietMs: 500, timeoutMs: 5000 })) - before.events;

  // The load phase queued one delivery per promoted report: let them reach the fake before timing fresh ones.
  const drain = await waitForDeliveries(fakeAds, before.delivered + events);
  const drained = drain.conversions - before.delivered;

  // "Moderate": at most a quarter of the throughput just measured, so the sample times delivery, not a queue of reports
  // in front of a slow service; and no more than ~10 s of sending.
  const rate = Math.max(2, Math.min(sampleRate, Math.floor(main.requests_per_s / 4)));
  const count = Math.min(sample, Math.max(20, rate * 10));
  const delivery = await measureDeliveryDelay({ sut, fakeAds, secret, count, rate, protocol, hmac });
  const delays = delivery.delays;
  delete delivery.delays;

  // Every event's actions delivered exactly once: from the database (no action left undelivered, no outbox row left)
  // and from the fake (no transactionId accepted twice, as many accepted as the database delivered).
  // The last sends' outcomes may still be on their way to the database: wait for the outbox to empty (or 10 s).
  await settleCount(async () => (await sut.sql('select count(*)::int as n from outbox'))[0].n, 0, { quietMs: 10_000, timeoutMs: 10_000 });
  const [db] = await sut.sql(
    `select count(*)::int as actions, count(*) filter (where a.status = 'delivered')::int as delivered,
       (select count(*)::int from outbox) as outbox
     from event_actions a join events e on e.id = a.event_id where e.site_id = $1`,
    [sut.site.id],
  );
  const fake = await fakeAds.call({ type: 'doubles' });
  const deliveries = {
    actions: db.actions,
    delivered: db.delivered,
    not_delivered: db.actions - db.delivered,
    outbox_left: db.outbox,
    fake_distinct: fake.distinct,
    doubled: fake.doubled,
  };

  const bare = bracketBare(bareResult, await bareAfter?.());
  const ofBare = ratio(main.requests_per_s, bare.requests_per_s);
  return {
    endpoint: `POST ${path}`,
    deliveries,
    store: sut.label ?? 'embedded PGlite',
    instances: sut.instances ?? 1,
    service: main,
    usage,
    attempts,
    bare,
    ratio_to_bare: ofBare,
    accounting: {
      answered_200: answered200,
      correlated_200: sumOf(runs, (r) => r.reports_ok?.correlated ?? 0),
      uncorrelated_200: sumOf(runs, (r) => r.reports_ok?.uncorrelated ?? 0),
      non_200: sumOf(runs, (r) => r.requests_total - (r.status_counts['200'] ?? 0)),
      reports_stored: reports,
      events_created: events,
      connection_errors: sumOf(runs, (r) => r.errors),
    },
    built,
    backlog: { deliveries: events, delivered: drained, seconds: drain.seconds, per_second: drain.seconds >= 0.5 ? drained / drain.seconds : null },
    delivery,
    targets: {
      per_second: { target: `>= ${num(WEBHOOK_TARGETS.perSecond)} reports/s`, value: main.requests_per_s, met: main.requests_per_s >= WEBHOOK_TARGETS.perSecond },
      p99: { target: `p99 < ${WEBHOOK_TARGETS.p99Ms} ms`, value: main.latency_ms.p99, met: main.latency_ms.p99 < WEBHOOK_TARGETS.p99Ms },
      of_bare: { target: `>= ${WEBHOOK_TARGETS.ofBare} of the bare route`, value: ofBare, met: ofBare !== null && ofBare >= WEBHOOK_TARGETS.ofBare },
      delivery_p99: deliveryTarget(delivery, delays),
      nothing_lost: { target: 'every report answered 200 is stored', value: answered200 - reports, met: answered200 === reports },
      delivered_once: {
        target: 'every action delivered once (database and fake)',
        value: deliveries.not_delivered + deliveries.doubled,
        met: deliveries.not_delivered === 0 && deliveries.doubled === 0 && deliveries.fake_distinct >= deliveries.delivered,
      },
    },
  };
}

/**
 * What the p99 target asks of a closed-loop load: with C requests always in flight, the mean latency is C divided by
 * the throughput (Little's law), so a p99 under the target needs more than C / target requests a second even with no
 * spread at all.
 */
export function closedLoopNote(service) {
  const mean = (service.connections * 1000) / service.requests_per_s;
  const floor = (service.connections * 1000) / WEBHOOK_TARGETS.p99Ms;
  return `${service.connections} requests always in flight: mean latency = ${service.connections} / throughput = ${num(mean, 1)} ms; ` +
    `p99 < ${WEBHOOK_TARGETS.p99Ms} ms needs more than ${num(floor)} reports/s with no spread at all`;
}

/** The webhook benchmark's tables as text. */
export function formatWebhookResults(r) {
  const t = r.targets;
  const a = r.accounting;
  const d = r.delivery;
  const b = r.backlog;
  return [
    `== Webhook reports, ${storeTitle(r)} (${r.service.connections} connections, no pipelining, ${num(r.service.duration_s)} s, each request freshly signed) ==`,
    formatTable(THROUGHPUT_HEADER, [throughputRow(`service ${r.endpoint.replace(/saas-signup\/[^/]+/, 'saas-signup/KEY')}`, r.service), ...bareRows(r.bare)]),
    ratioLine(r),
    ...formatUsage(r.usage, r.bare),
    ...formatAttempts("the service's window", r.attempts),
    `accounting (warm-up and every attempt included): ${num(a.answered_200)} answered 200 (${num(a.correlated_200)} correlated, ${num(a.uncorrelated_200)} without token), ` +
      `${num(a.reports_stored)} of those stored as reports, ${num(a.events_created)} events created in all, ${num(a.non_200)} other answers, ${num(a.connection_errors)} connection errors`,
    ...(r.built && r.built.deferred_at_end > 0
      ? [`events built after the burst: ${num(r.built.deferred_at_end)} reports were waiting for their events when the load ended, ` +
          `built within ${num(r.built.seconds, 1)} s${r.built.still_waiting > 0 ? ` (${num(r.built.still_waiting)} STILL WAITING)` : ''}`]
      : []),
    r.built && r.built.deferred_at_end > 0
      ? `backlog: ${num(b.delivered)} of ${num(b.deliveries)} deliveries of the load phase reached the fake within ${num(r.built.seconds + b.seconds, 1)} s ` +
          `after it ended (their events built and sent side by side)`
      : b.seconds < 0.5
      ? `backlog: all ${num(b.delivered)} deliveries of the load phase had reached the fake when it ended (delivery kept up)`
      : `backlog: ${num(b.delivered)} of ${num(b.deliveries)} queued deliveries reached the fake within ${num(b.seconds, 1)} s after the load phase (${num(b.per_second)} /s)`,
    '',
    ...formatDelivery(d),
    '',
    `target  ${t.per_second.target}: ${num(t.per_second.value)} -> ${mark(t.per_second.met)}`,
    `target  ${t.p99.target}: ${num(t.p99.value, 1)} ms -> ${mark(t.p99.met)}`,
    `        (${closedLoopNote(r.service)})`,
    `target  ${t.of_bare.target}: ${times(t.of_bare.value)} -> ${mark(t.of_bare.met)}`,
    `target  ${t.delivery_p99.target}: ${num(t.delivery_p99.value)} ms -> ${mark(t.delivery_p99.met)}`,
    `check   ${t.nothing_lost.target}: ${num(a.answered_200)} answered, ${num(a.reports_stored)} of them found -> ${mark(t.nothing_lost.met)}`,
    `check   ${t.delivered_once.target}: ${num(r.deliveries.delivered)} of ${num(r.deliveries.actions)} actions delivered, ` +
      `${num(r.deliveries.outbox_left)} outbox rows left, ${num(r.deliveries.fake_distinct)} distinct conversions at the fake, ` +
      `${num(r.deliveries.doubled)} doubled -> ${mark(t.delivered_once.met)}`,
  ].join('\n');
}
