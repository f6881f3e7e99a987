/**
 * The collector the loader calls: a site's public config and the snapshot beacon. Public (no key); snapshots are
 * accepted only from the site's own origin. Snapshots are written in batches (see domain/snapshot-writer).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../http/app';
import { COLLECT_PREFIX, SNAPSHOT_MAX_BYTES } from '../../protocol/collector';
import { originAllowed, originRefused, siteConfigOf, siteNotFound } from './config';
import { parseSnapshotBody } from './snapshot-input';
import { SiteKeyCache } from './site-cache';
import { SnapshotWriter } from './snapshot-writer';
import type { SiteRow } from '../api/sites';

interface SiteParams {
  siteKey: string;
}

/** Registers GET …/config, POST …/snapshots and its CORS preflight. */
export default async function collectorRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const sites = new SiteKeyCache(ctx.db);
  const writer = new SnapshotWriter(ctx.db);
  app.addHook('onClose', () => writer.flush());

  // The beacon sends JSON as text/plain (CORS-simple); take every body as a string and parse it ourselves.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: SNAPSHOT_MAX_BYTES }, (_request, body, done) => done(null, body));

  // Any page may read the config and the error envelopes; a successful snapshot echoes the accepted origin instead.
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'OPTIONS') reply.header('access-control-allow-origin', '*');
  });

  /** The site, re-read before refusing, so a domain just set elsewhere is never refused from a stale cache. */
  async function siteFor(siteKey: string, origin: string | undefined): Promise<SiteRow> {
    let site = await sites.get(siteKey);
    if (!site || (origin !== undefined && !originAllowed(site, origin))) site = await sites.refresh(siteKey);
    if (!site) throw siteNotFound(siteKey);
    if (!originAllowed(site, origin)) throw originRefused(site, origin);
    return site;
  }

  app.get<{ Params: SiteParams }>(`${COLLECT_PREFIX}/sites/:siteKey/config`, async (request, reply) => {
    // Once per page view at most: read fresh, which also refreshes the cache the snapshots use.
    const site = await sites.refresh(request.params.siteKey);
    if (!site) throw siteNotFound(request.params.siteKey);
    return reply.header('cache-control', 'public, max-age=60').send(siteConfigOf(site));
  });

  app.options<{ Params: SiteParams }>(`${COLLECT_PREFIX}/sites/:siteKey/snapshots`, async (request, reply) => {
    const origin = request.headers.origin;
    await siteFor(request.params.siteKey, origin);
    allowOrigin(reply, origin!)
      .header('access-control-allow-methods', 'POST')
      .header('access-control-allow-headers', 'content-type')
      .header('access-control-max-age', '600')
      .code(204)
      .send();
  });

  app.post<{ Params: SiteParams }>(
    `${COLLECT_PREFIX}/sites/:siteKey/snapshots`,
    { bodyLimit: SNAPSHOT_MAX_BYTES },
    async (request, reply) => {
      const origin = request.headers.origin;
      const site = await siteFor(request.params.siteKey, origin);
      const snapshot = parseSnapshotBody(request.body);
      await writer.write({ siteId: site.id, snapshot });
      allowOrigin(reply, origin!).code(204).send();
    },
  );
}

function allowOrigin(reply: FastifyReply, origin: string): FastifyReply {
  return reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
}
