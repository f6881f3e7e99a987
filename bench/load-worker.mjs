/**
 * The load generator, run as a child process (see bench/run.mjs for why): autocannon at N connections without
 * pipelining, each request built fresh by setupRequest (distinct tokens, distinct customer_event_ids, a fresh
 * signature with the current timestamp). Driven by messages from the parent:
 *   {id, kind: 'snapshots' | 'reports' | 'bare', url, path, ...}  ->  {id, result} or {id, error}
 * It remembers the tokens whose snapshots were accepted (204), so correlated reports use tokens that have a snapshot.
 */
import autocannon from 'autocannon';
import { importTs } from './support/ts-module.mjs';
import { newCorrelationToken, reportBody, snapshotBody } from './request-bodies.mjs';

const protocol = await importTs('src/protocol/index.ts');
const { computeSignature, unixSeconds } = await importTs('src/protocol/hmac-node.ts');

/** Tokens with a stored snapshot, not yet used by a report. */
const acceptedTokens = [];
let reportSeq = 0;
/** Reports answered 200 in the current run, by kind (autocannon deep-clones contexts, so this lives here). */
let reportCounts = { correlated: 0, uncorrelated: 0 };
/** What the current run got answered: snapshot tokens (204) or customer_event_ids (200), for the parent's count check. */
let answeredIds = [];

function snapshotRequest(job) {
  return {
    method: 'POST',
    path: job.path,
    setupRequest(request, context) {
      const token = newCorrelationToken();
      context.token = token;
      request.body = snapshotBody(token, job.origin);
      request.headers = { ...request.headers, origin: job.origin, 'content-type': protocol.SNAPSHOT_CONTENT_TYPE };
      return request;
    },
    onResponse(status, _body, context) {
      if (status === 204 && context.token) {
        acceptedTokens.push(context.token);
        answeredIds.push(context.token);
      }
      context.token = undefined;
    },
  };
}

function reportRequest(job) {
  const runTag = `${job.tag}-${process.pid}`;
  return {
    method: 'POST',
    path: job.path,
    setupRequest(request, context) {
      const seq = reportSeq++;
      // Every other report is correlated, with a token whose snapshot the service stored earlier.
      const token = seq % 2 === 0 ? (acceptedTokens.pop() ?? null) : null;
      const body = reportBody(`${runTag}-${seq}`, token);
      const timestamp = unixSeconds();
      const signature = protocol.formatSignatureHeader(timestamp, [computeSignature(job.secret, timestamp, job.path, body)]);
      context.correlated = token !== null;
      context.customerEventId = `${runTag}-${seq}`;
      request.body = body;
      request.headers = { ...request.headers, 'content-type': 'application/json', [protocol.SIGNATURE_HEADER.toLowerCase()]: signature };
      return request;
    },
    onResponse(status, _body, context) {
      if (status === 200) {
        reportCounts[context.correlated ? 'correlated' : 'uncorrelated']++;
        answeredIds.push(context.customerEventId);
      }
    },
  };
}

function bareRequest(job) {
  // The same bytes a snapshot request carries, so the baseline pays the same parsing and transfer.
  const request = snapshotRequest(job);
  return { ...request, onResponse() {} };
}

function run(job) {
  reportCounts = { correlated: 0, uncorrelated: 0 };
  answeredIds = [];
  const request = job.kind === 'snapshots' ? snapshotRequest(job) : job.kind === 'reports' ? reportRequest(job) : bareRequest(job);
  const before = acceptedTokens.length;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: job.url,
        connections: job.connections,
        pipelining: 1,
        duration: job.duration,
        requests: [request],
      },
      (error, result) => (error ? reject(error) : resolve(summarise(result, reportCounts, acceptedTokens.length - before, job))),
    );
    instance.on('error', reject);
  });
}

function summarise(result, counts, acceptedDelta, job) {
  const statusCounts = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, Number(s.count)]));
  const total = Object.values(statusCounts).reduce((a, b) => a + b, 0);
  return {
    kind: job.kind,
    connections: result.connections,
    pipelining: result.pipelining,
    duration_s: result.duration,
    requests_total: total,
    requests_per_s: total / result.duration,
    latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max, mean: result.latency.average },
    status_counts: statusCounts,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    snapshots_accepted: job.kind === 'snapshots' ? acceptedDelta : undefined,
    reports_ok: job.kind === 'reports' ? counts : undefined,
    tokens_left: acceptedTokens.length,
    // Requests still in flight when a timed run stops are not counted by autocannon, though the server may complete
    // them: the parent checks these exact ids against the database rather than comparing totals.
    answered_ids: job.returnIds ? answeredIds : undefined,
  };
}

process.on('message', async (job) => {
  try {
    if (job.kind === 'tokens') return process.send({ id: job.id, result: { tokens_left: acceptedTokens.length } });
    process.send({ id: job.id, result: await run(job) });
  } catch (error) {
    process.send({ id: job.id, error: String(error?.stack ?? error) });
  }
});
process.send({ ready: true });
