/** /v1/handoffs: create a handoff (its url is the hosted page) and poll it. Handlers only translate HTTP to domain calls. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { createHandoff, getHandoff } from './handoffs';
import { CreateHandoffBody, Handoff, HandoffIdParams } from './schemas';

export default async function handoffRoutes(fastify: FastifyInstance, { db, settings }: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/handoffs', { schema: { summary: 'Create a handoff (a hosted page to connect a destination or the API trigger)', body: CreateHandoffBody, response: { 201: Handoff } } }, async (request, reply) =>
    reply.status(201).send(await createHandoff(db, settings, accountOf(request).id, request.body)),
  );
  app.get('/handoffs/:id', { schema: { summary: 'Get a handoff (poll until completed)', params: HandoffIdParams, response: { 200: Handoff } } }, async (request) =>
    getHandoff(db, settings, accountOf(request).id, request.params.id),
  );
}
