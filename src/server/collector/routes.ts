/**
 * The collector the loader calls: a site's public config and the snapshot beacon. Public (no key); snapshots are
 * accepted only from the site's own origin. Snapshots are written in batches (see domain/snapshot-writer).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../http/app';
import { PlainText } from '../http/schemas';
import { utf8Text } from '../http/json-text';
import { printable } from '../http/errors';
import { COLLECT_PREFIX, SNAPSHOT_MAX_BYTES } from '../../protocol/collector';
import { originAllowed, originRefused, siteNotFound } from './config';
import { snapshotClientOf } from './snapshot-client';
import { parseSnapshotBody } from './snapshot-input';
import { onServiceClock } from './visitor-clock';
import { parseFormSubmissionBody } from './form-submission-input';
import { recordFormSubmission } from './form-submissions';
import { SiteKeyCache } from './site-cache';
import { SiteConfigs } from './site-configs';
import { SnapshotWriter } from './snapshot-writer';
import { OriginTraffic } from './origin-traffic';
import type { SiteRow } from '../api/sites';

/** `{site_key}` of every collector path: the public key of the install snippet (a NUL or other control character is a 400, never a query). */
export const CollectorSiteParams = Type.Object(
  { site_key: PlainText('The public site key of the install snippet.', { maxLength: 100 }) },
  { additionalProperties: false },
);

/** Registers GET …/config, POST …/snapshots and its CORS preflight. */
export default async function collectorRoutes(fastify: FastifyInstance, ctx: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const sites = new SiteKeyCache(ctx.db);
  const siteConfigs = new SiteConfigs(ctx.db);
  const writer = new SnapshotWriter(ctx.db, { insertFirst: ctx.db.kind === 'pglite' });
  // The install check of the dashboard: which page origins were served or refused, and why.
  const traffic = new OriginTraffic(ctx.db, { onError: (error) => fastify.log.warn({ err: error }, 'could not record collector origins') });
  app.addHook('onClose', async () => {
    await writer.flush();
    await traffic.flush();
  });

  // The beacon sends JSON as text/plain (CORS-simple); take every body as a string and parse it ourselves.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: SNAPSHOT_MAX_BYTES }, (_request, body, done) => {
    try {
      done(null, utf8Text(body as Buffer, 'The body'));
    } catch (error) {
      done(error as Error);
    }
  });

  // Any page may read the config and the error envelopes; a successful snapshot echoes the accepted origin instead.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.method !== 'OPTIONS') reply.header('access-control-allow-origin', '*');
    done();
  });

  /** The site, re-read before refusing, so a domain just set elsewhere is never refused from a stale cache. */
  async function siteFor(siteKey: string, origin: string | undefined): Promise<SiteRow> {
    let site = await sites.get(siteKey);
    let allowed = site !== null && originAllowed(site, origin);
    if (!site || (origin !== undefined && !allowed)) {
      site = await sites.refresh(siteKey);
      allowed = site !== null && originAllowed(site, origin);
    }
    if (!site) throw siteNotFound(siteKey);
    // The refusal quotes the Origin header: only in printable form (a header may carry a tab).
    if (!allowed) {
      traffic.refused(site, origin);
      throw originRefused(site, origin === undefined ? undefined : printable(origin, 200));
    }
    return site;
  }

  const schema = { params: CollectorSiteParams };
  // The time a snapshot or submission is received: the visitor's clock is set right against it (visitor-clock.ts).
  const now = ctx.now ?? (() => new Date());
  // Per client address and per site (CNV_RATE_LIMIT_COLLECTOR_*): checked before the body is read.
  const limited = (await ctx.rateLimits?.hook(app, 'collector')) ?? null;
  const limits = limited ? { onRequest: limited } : {};

  app.get(`${COLLECT_PREFIX}/sites/:site_key/config`, { schema }, async (request, reply) => {
    // Once per page view at most, from memory (site-configs.ts: a change made through this process is in the next one).
    const found = await siteConfigs.get(request.params.site_key);
    if (!found) throw siteNotFound(request.params.site_key);
    traffic.config(found.site, request.headers.origin);
    return reply.header('cache-control', 'public, max-age=60').send(found.config);
  });

  // Preflights of the two POST endpoints (a page may send them with fetch and a JSON content type).
  for (const kind of ['snapshots', 'form-submissions']) {
    app.options(`${COLLECT_PREFIX}/sites/:site_key/${kind}`, { schema }, async (request, reply) => {
      const origin = request.headers.origin;
      await siteFor(request.params.site_key, origin);
      allowOrigin(reply, origin!)
        .header('access-control-allow-methods', 'POST')
        .header('access-control-allow-headers', 'content-type')
        .header('access-control-max-age', '600')
        .code(204)
        .send();
    });
  }

  app.post(
    `${COLLECT_PREFIX}/sites/:site_key/snapshots`,
    { bodyLimit: SNAPSHOT_MAX_BYTES, schema, ...limits },
    async (request, reply) => {
      const origin = request.headers.origin;
      const site = await siteFor(request.params.site_key, origin);
      const snapshot = onServiceClock(parseSnapshotBody(request.body), now());
      await writer.write({ siteId: site.id, snapshot, client: snapshotClientOf(request) });
      traffic.served(site, origin, 'snapshot');
      allowOrigin(reply, origin!).code(204).send();
    },
  );

  // A successful submission of a form tool (the form trigger): stored once per submission_id, fanned out to the
  // site's live form-trigger flows whose integration and page filter match.
  app.post(
    `${COLLECT_PREFIX}/sites/:site_key/form-submissions`,
    { bodyLimit: SNAPSHOT_MAX_BYTES, schema, ...limits },
    async (request, reply) => {
      const origin = request.headers.origin;
      const site = await siteFor(request.params.site_key, origin);
      const submission = onServiceClock(parseFormSubmissionBody(request.body), now());
      await recordFormSubmission(ctx.db, site, submission, snapshotClientOf(request));
      traffic.served(site, origin, 'form_submission');
      allowOrigin(reply, origin!).code(204).send();
    },
  );
}

function allowOrigin(reply: FastifyReply, origin: string): FastifyReply {
  return reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
}
