/**
 * The webhook bridge: `POST /api/webhook-bridge/saas-signup/{site_key}/{trigger_key}` (a signup),
 * `…/conversion/{site_key}/{trigger_key}` (a later stage of the customer) and `…/adjustment/{site_key}` (restate or
 * retract a reported conversion), each signed with the site's webhook secret over the raw body bytes and the path as
 * sent. The handlers verify, validate, and hand over to the domain.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../http/app';
import { SIGNATURE_HEADER, TRIGGER_KEY_PATTERN, WEBHOOK_MAX_BYTES, WEBHOOK_PREFIX } from '../../protocol/webhook';
import { ApiError } from '../http/errors';
import { ErrorEnvelope, PlainText } from '../http/schemas';
import { siteNotFound } from '../collector';
import { SiteKeyCache } from '../collector';
import { parseReportBody } from './report-input';
import { ReportWriter } from './report-writer';
import { WebhookSecretCache } from './secret-cache';
import { serviceSecretBox } from '../db/secret-box';
import { markIntakeBusy, requestDelivery } from '../delivery';
import { verifySignature } from './signature';
import { parseBodyObject, validateAdjustment, validateConversion } from './conversion-input';
import { recordAdjustment } from './adjustment';
import type { ConversionResponse as ConversionAnswer } from '../../protocol/webhook';
import { AdjustmentBody, AdjustmentResponse, ConversionBody, ConversionResponse, ReportBody, ReportResponse } from './schemas';
import type { SiteRow } from '../api/sites';
import { erasedIdHash, erasureHash } from '../api/erasures';

/** How often the webhook looks for reports left waiting for their events (see ReportWriter.sweep). */
export const FANOUT_SWEEP_MS = 30_000;

/**
 * The path of a report: the site's public key and the trigger key of its flows. Checked before anything is looked up,
 * so a NUL or a malformed key is a 400 naming it, never a query. (The body is checked by hand after the signature:
 * the HMAC covers its raw bytes, see report-input.ts.)
 */
export const ReportParams = Type.Object(
  {
    site_key: PlainText("The site's public key (the one in the install snippet).", { maxLength: 100 }),
    trigger_key: Type.String({
      pattern: TRIGGER_KEY_PATTERN.source,
      description: "The trigger key of the flows' API trigger: 1 to 64 characters from [A-Za-z0-9_-].",
    }),
  },
  { additionalProperties: false },
);

/** The path of an adjustment: the site's public key. */
export const AdjustmentParams = Type.Object(
  { site_key: PlainText("The site's public key (the one in the install snippet).", { maxLength: 100 }) },
  { additionalProperties: false },
);

/** Registers the webhooks of the bridge. */
export default async function webhookRoutes(fastify: FastifyInstance, ctx: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const sites = new SiteKeyCache(ctx.db);
  // The secrets are stored sealed: the cache opens them once per fill, never per request.
  const secrets = new WebhookSecretCache(ctx.db, serviceSecretBox(ctx.settings));
  // The keyed hash an erased report or adjustment keeps of its caller's id: a retry of one is still a repeat.
  const idHash = erasedIdHash(erasureHash(ctx.settings));
  // Reports are recorded in batches (group commit); anything still buffered is written before the app closes.
  const writer = new ReportWriter(ctx.db, {
    onDeliveriesQueued: requestDelivery,
    onQueued: () => markIntakeBusy(ctx.db),
    onFanOutError: (error) => fastify.log.error({ err: error }, 'building the events of reports stored during a burst failed; they stay stored and are tried again'),
  });
  // Reports a burst stored waiting for their events are built by the writer after the burst; at start and now and then it
  // also looks for ones a crash (or another instance that is gone) left waiting.
  writer.sweep();
  const sweeps = setInterval(() => writer.sweep(), FANOUT_SWEEP_MS);
  sweeps.unref();
  app.addHook('onClose', async () => {
    clearInterval(sweeps);
    await writer.close();
  });

  // The signature covers the exact bytes: keep every body as a Buffer, whatever its content type, and never re-serialise.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_MAX_BYTES }, (_request, body, done) => done(null, body));

  const now = ctx.now ?? (() => new Date());
  // Per client address and per site (CNV_RATE_LIMIT_WEBHOOK_*), on every route of the bridge: checked before the body is read.
  const limited = (await ctx.rateLimits?.hook(app, 'webhook')) ?? null;
  const limits = limited ? { onRequest: limited } : {};

  /**
   * The site of a signed request and its raw body, once the signature over the raw bytes and the path as sent has
   * been verified with one of the site's webhook secrets (the same check for every webhook of the bridge).
   */
  const verified = async (request: FastifyRequest, siteKey: string): Promise<{ site: SiteRow; rawBody: Buffer }> => {
    // Site keys are public (every install snippet shows one), so an unknown one is a plain 404, not a hidden 401.
    const site = await sites.get(siteKey);
    if (!site) throw siteNotFound(siteKey);
    const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const header = request.headers[SIGNATURE_HEADER.toLowerCase()];
    // The path exactly as it came over the wire (still percent-encoded), without the query string.
    const path = (request.raw.url ?? request.url).split('?')[0]!;
    const verdict = await secrets.verify(site.id, (valid) => verifySignature({ rawBody, header, secrets: valid, path }));
    if (!verdict) {
      throw new ApiError(
        401, 'authentication_error', 'no_webhook_secret',
        'no webhook secret: connect the API trigger source of this site (POST /v1/handoffs with purpose connect_trigger_source).',
      );
    }
    if (!verdict.ok) throw new ApiError(401, 'authentication_error', verdict.code, verdict.message);
    if (verdict.secretIndex > 0) request.log.info({ site_id: site.id }, 'webhook signed with the previous secret (rotation in progress)');
    return { site, rawBody };
  };

  /** The 409 of a report whose customer_event_id the site holds for a report of the other kind. */
  const CustomerEventIdReused = {
    ...ErrorEnvelope,
    description:
      'customer_event_id_reused: the customer_event_id was already used on this site for a report of the other kind (a signup ' +
      'for a later stage, a later stage for a signup); a retry goes to the same webhook. The message names the earlier ' +
      'report. Nothing is recorded; do not retry.',
  };

  app.post(
    `${WEBHOOK_PREFIX}/saas-signup/:site_key/:trigger_key`,
    {
      bodyLimit: WEBHOOK_MAX_BYTES,
      ...limits,
      schema: {
        summary: 'Report a signup (signed)',
        description:
          'Your backend reports a signup: one event per live flow of the site whose API trigger has this key. Checks run in ' +
          'this order: rate limits, body size, the trigger key\'s shape, site key, signature (over the raw bytes), body. A repeat of a customer_event_id answers ' +
          "the first report's response and counts nothing twice (a repeat with another value keeps the first: use an adjustment). A 200 means the report is stored; during a burst its " +
          'events are built right after the burst (see docs/webhook.md).',
        params: ReportParams,
        response: { 200: ReportResponse, 409: CustomerEventIdReused },
      },
      // Documented, not validated by Fastify: the body is checked after the signature, over the raw bytes.
      config: { openapiBody: ReportBody },
    },
    async (request) => {
      const { site_key: siteKey, trigger_key: triggerKey } = request.params;
      const { site, rawBody } = await verified(request, siteKey);
      const report = parseReportBody(rawBody);
      return writer.submit({ site, triggerKey, report, now: new Date(), erasedIdHash: idHash(site.id, 'customer_event_id', report.customer_event_id) });
    },
  );

  app.post(
    `${WEBHOOK_PREFIX}/conversion/:site_key/:trigger_key`,
    {
      bodyLimit: WEBHOOK_MAX_BYTES,
      ...limits,
      schema: {
        summary: 'Report a later stage of a customer (signed)',
        description:
          "A trial, a qualified lead, a payment or a renewal: one event per live flow whose API trigger is {type: 'conversion', key}. " +
          'The click is found by correlation_token, else through the latest signup of the same customer_id; match says which. ' +
          'Signed like the saas-signup webhook; deduped on customer_event_id (a repeat answers the first response and keeps the first value: use an adjustment).',
        params: ReportParams,
        response: { 200: ConversionResponse, 409: CustomerEventIdReused },
      },
      config: { openapiBody: ConversionBody },
    },
    async (request) => {
      const { site_key: siteKey, trigger_key: triggerKey } = request.params;
      const { site, rawBody } = await verified(request, siteKey);
      const at = now();
      const report = validateConversion(parseBodyObject(rawBody), at);
      // A later stage's submission is answered with a ConversionResponse (with `match`), see report.ts.
      return writer.submit({
        site, triggerKey, report, now: new Date(), kind: 'conversion', occurredAt: report.occurred_at,
        erasedIdHash: idHash(site.id, 'customer_event_id', report.customer_event_id),
      }) as Promise<ConversionAnswer>;
    },
  );

  app.post(
    `${WEBHOOK_PREFIX}/adjustment/:site_key`,
    {
      bodyLimit: WEBHOOK_MAX_BYTES,
      ...limits,
      schema: {
        summary: 'Restate or retract a reported conversion (signed)',
        description:
          'Applies to every event the report with this customer_event_id created, on every destination, after the original ' +
          'delivery; each platform gets what its documents define, else the result says unsupported. Deduped on adjustment_id ' +
          '(a repeat must be the same adjustment); an unknown customer_event_id is 404.',
        params: AdjustmentParams,
        response: {
          200: AdjustmentResponse,
          404: {
            ...ErrorEnvelope,
            description: 'site_not_found: no site has this key; resource_missing (error.param customer_event_id): no conversion ' +
              'was reported with this customer_event_id on this site. Nothing is recorded.',
          },
          409: {
            ...ErrorEnvelope,
            description: 'adjustment_id_reused: the adjustment_id was used for another conversion, type, value or currency; ' +
              "conversion_erased: the conversion's person was erased; conversion_retracted: a restatement of a conversion " +
              'already retracted (a retraction is final). Nothing is recorded.',
          },
        },
      },
      config: { openapiBody: AdjustmentBody },
    },
    async (request) => {
      const { site, rawBody } = await verified(request, request.params.site_key);
      const at = now();
      const adjustment = validateAdjustment(parseBodyObject(rawBody), at);
      return recordAdjustment(ctx.db, site.id, adjustment, at, requestDelivery, idHash);
    },
  );
}
