/** /v1/notification_endpoints: list, create, read, delete. Handlers only translate HTTP to domain calls. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { createEndpoint, getEndpoint, listEndpoints, removeEndpoint } from './endpoints';
import { CreatedEndpoint, CreateEndpointBody, DeletedEndpoint, Endpoint, EndpointIdParams, EndpointList, ListEndpointsQuery } from './schemas';

export default async function notificationEndpointRoutes(fastify: FastifyInstance, { db, settings }: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/notification_endpoints', { schema: { summary: 'List notification endpoints', querystring: ListEndpointsQuery, response: { 200: EndpointList } } }, async (request) =>
    listEndpoints(db, accountOf(request).id, request.query),
  );
  app.post('/notification_endpoints', { schema: { summary: 'Add a notification endpoint (its signing secret is in this answer only)', body: CreateEndpointBody, response: { 201: CreatedEndpoint } } }, async (request, reply) =>
    reply.status(201).send(await createEndpoint(db, settings, accountOf(request).id, request.body)),
  );
  app.get('/notification_endpoints/:id', { schema: { summary: 'Get a notification endpoint', params: EndpointIdParams, response: { 200: Endpoint } } }, async (request) =>
    getEndpoint(db, accountOf(request).id, request.params.id),
  );
  app.delete('/notification_endpoints/:id', { schema: { summary: 'Remove a notification endpoint and its pending notifications', params: EndpointIdParams, response: { 200: DeletedEndpoint } } }, async (request) =>
    removeEndpoint(db, accountOf(request).id, request.params.id),
  );
}
