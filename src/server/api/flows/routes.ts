/** /v1/flows: drafts, publish and unpublish, reads and edits. Handlers only translate HTTP to domain calls. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { createFlow, getFlow, listFlows, patchFlow, publishFlow, unpublishFlow } from './flows';
import { CreateFlowBody, FlowIdParams, ListFlowsQuery, PatchFlowBody } from './schemas';

export default async function flowRoutes(fastify: FastifyInstance, { db }: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/flows', { schema: { body: CreateFlowBody } }, async (request, reply) =>
    reply.status(201).send(await createFlow(db, accountOf(request).id, request.body)),
  );
  app.get('/flows', { schema: { querystring: ListFlowsQuery } }, async (request) => listFlows(db, accountOf(request).id, request.query));
  app.get('/flows/:id', { schema: { params: FlowIdParams } }, async (request) => getFlow(db, accountOf(request).id, request.params.id));
  app.patch('/flows/:id', { schema: { params: FlowIdParams, body: PatchFlowBody } }, async (request) =>
    patchFlow(db, accountOf(request).id, request.params.id, request.body),
  );
  // "No body": whatever is sent is ignored.
  app.post('/flows/:id/publish', { schema: { params: FlowIdParams } }, async (request) =>
    publishFlow(db, accountOf(request).id, request.params.id),
  );
  app.post('/flows/:id/unpublish', { schema: { params: FlowIdParams } }, async (request) =>
    unpublishFlow(db, accountOf(request).id, request.params.id),
  );
}
