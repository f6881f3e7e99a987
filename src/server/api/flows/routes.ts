/** /v1/flows: drafts, publish and unpublish, reads and edits. */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { createFlow, getFlow, listFlows, patchFlow, publishFlow, unpublishFlow } from './flows';
import type { JsonObject } from '../../http/input';

type ById = { Params: { id: string } };

export default async function flowRoutes(app: FastifyInstance, { db }: AppContext): Promise<void> {
  app.post('/flows', async (request, reply) => reply.status(201).send(await createFlow(db, accountOf(request).id, request.body)));
  app.get('/flows', async (request) => listFlows(db, accountOf(request).id, request.query as JsonObject));
  app.get<ById>('/flows/:id', async (request) => getFlow(db, accountOf(request).id, request.params.id));
  app.patch<ById>('/flows/:id', async (request) => patchFlow(db, accountOf(request).id, request.params.id, request.body));
  // "No body": whatever is sent is ignored.
  app.post<ById>('/flows/:id/publish', async (request) => publishFlow(db, accountOf(request).id, request.params.id));
  app.post<ById>('/flows/:id/unpublish', async (request) => unpublishFlow(db, accountOf(request).id, request.params.id));
}
