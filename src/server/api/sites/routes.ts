/** /v1/sites: list, create, read, update. Handlers only translate HTTP to domain calls; the schemas check the input. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { createSite, getSite, listSites, patchSite } from './sites';
import { ListSitesQuery, SiteFields, SiteIdParams } from './schemas';

export default async function siteRoutes(fastify: FastifyInstance, { db }: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/sites', { schema: { querystring: ListSitesQuery } }, async (request) => listSites(db, accountOf(request).id, request.query));
  app.post('/sites', { schema: { body: SiteFields } }, async (request, reply) =>
    reply.status(201).send(await createSite(db, accountOf(request).id, request.body)),
  );
  app.get('/sites/:id', { schema: { params: SiteIdParams } }, async (request) => getSite(db, accountOf(request).id, request.params.id));
  app.patch('/sites/:id', { schema: { params: SiteIdParams, body: SiteFields } }, async (request) =>
    patchSite(db, accountOf(request).id, request.params.id, request.body),
  );
}
