/** /v1/sites: list, create, read, update. Handlers only translate HTTP to domain calls; the schemas check the input. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { createSite, getSite, listSites, patchSite } from './sites';
import { CreateSiteBody, ListSitesQuery, Site, SiteFields, SiteIdParams, SiteList } from './schemas';

export default async function siteRoutes(fastify: FastifyInstance, { db }: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/sites', { schema: { summary: 'List sites', querystring: ListSitesQuery, response: { 200: SiteList } } }, async (request) => listSites(db, accountOf(request).id, request.query));
  app.post('/sites', { schema: { summary: 'Create a site', body: CreateSiteBody, response: { 201: Site } } }, async (request, reply) =>
    reply.status(201).send(await createSite(db, accountOf(request).id, request.body)),
  );
  app.get('/sites/:id', { schema: { summary: 'Get a site', params: SiteIdParams, response: { 200: Site } } }, async (request) => getSite(db, accountOf(request).id, request.params.id));
  app.patch('/sites/:id', { schema: { summary: 'Update a site', params: SiteIdParams, body: SiteFields, response: { 200: Site } } }, async (request) =>
    patchSite(db, accountOf(request).id, request.params.id, request.body),
  );
}
