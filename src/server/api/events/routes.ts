/** /v1/events: read-only list (newest first, timestamp cursor) and single reads. */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { getEvent, listEvents } from './events';
import type { JsonObject } from '../../http/input';

export default async function eventRoutes(app: FastifyInstance, { db }: AppContext): Promise<void> {
  app.get('/events', async (request) => listEvents(db, accountOf(request).id, request.query as JsonObject));
  app.get<{ Params: { id: string } }>('/events/:id', async (request) => getEvent(db, accountOf(request).id, request.params.id));
}
