/** /v1/handoffs: create a handoff (its url is the hosted page) and poll it. */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { createHandoff, getHandoff } from './handoffs';

export default async function handoffRoutes(app: FastifyInstance, { db, settings }: AppContext): Promise<void> {
  app.post('/handoffs', async (request, reply) =>
    reply.status(201).send(await createHandoff(db, settings, accountOf(request).id, request.body)),
  );
  app.get<{ Params: { id: string } }>('/handoffs/:id', async (request) =>
    getHandoff(db, settings, accountOf(request).id, request.params.id),
  );
}
