/** /v1/sites: list, create, read, update. Handlers only translate HTTP to domain calls. */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { createSite, getSite, listSites, patchSite } from './sites';
import type { JsonObject } from '../../http/input';

type ById = { Params: { id: string } };

export default async function siteRoutes(app: FastifyInstance, { db }: AppContext): Promise<void> {
  app.get('/sites', async (request) => listSites(db, accountOf(request).id, request.query as JsonObject));
  app.post('/sites', async (request, reply) => reply.status(201).send(await createSite(db, accountOf(request).id, request.body)));
  app.get<ById>('/sites/:id', async (request) => getSite(db, accountOf(request).id, request.params.id));
  app.patch<ById>('/sites/:id', async (request) => patchSite(db, accountOf(request).id, request.params.id, request.body));
}
