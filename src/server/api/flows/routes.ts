/** /v1/flows: drafts, publish and unpublish, reads and edits. Handlers only translate HTTP to domain calls. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { createFlow, getFlow, listFlows, patchFlow, publishFlow, unpublishFlow } from './flows';
import { CreateFlowBody, Flow, FlowIdParams, FlowInvalid, FlowList, ListFlowsQuery, PatchFlowBody, PublishedFlow } from './schemas';
import { Type } from '@sinclair/typebox';
import { ErrorEnvelope } from '../../http/schemas';

export default async function flowRoutes(fastify: FastifyInstance, { db }: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/flows', { schema: { summary: 'Create a draft flow', body: CreateFlowBody, response: { 201: Flow } } }, async (request, reply) =>
    reply.status(201).send(await createFlow(db, accountOf(request).id, request.body)),
  );
  app.get('/flows', { schema: { summary: 'List flows', querystring: ListFlowsQuery, response: { 200: FlowList } } }, async (request) => listFlows(db, accountOf(request).id, request.query));
  app.get('/flows/:id', { schema: { summary: 'Get a flow', params: FlowIdParams, response: { 200: Flow } } }, async (request) => getFlow(db, accountOf(request).id, request.params.id));
  app.patch('/flows/:id', {
    schema: {
      summary: 'Update a flow (a live flow may only be renamed)',
      params: FlowIdParams,
      body: PatchFlowBody,
      response: { 200: Flow, 409: { ...ErrorEnvelope, description: 'flow_live: unpublish before changing what a live flow delivers.' } },
    },
  }, async (request) =>
    patchFlow(db, accountOf(request).id, request.params.id, request.body),
  );
  // "No body": whatever is sent is ignored.
  app.post('/flows/:id/publish', {
    schema: {
      summary: 'Publish a flow (validated first)',
      params: FlowIdParams,
      response: {
        200: PublishedFlow,
        400: Type.Union([FlowInvalid, ErrorEnvelope], { description: 'flow_invalid with every problem in errors, or another 400 of the envelope (a malformed id or body).' }),
      },
    },
  }, async (request) =>
    publishFlow(db, accountOf(request).id, request.params.id),
  );
  app.post('/flows/:id/unpublish', { schema: { summary: 'Unpublish a flow (back to draft)', params: FlowIdParams, response: { 200: Flow } } }, async (request) =>
    unpublishFlow(db, accountOf(request).id, request.params.id),
  );
}
