/** /v1/events: read-only list (newest first, timestamp cursor) and single reads. Handlers only translate HTTP to domain calls. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { getEvent, listEvents } from './events';
import { identityWindowStart } from '../../privacy';
import { redeliverEvent } from './redeliver';
import { ErrorEnvelope } from '../../http/schemas';
import { Event, EventIdParams, EventList, ListEventsQuery } from './schemas';

export default async function eventRoutes(fastify: FastifyInstance, { db, settings }: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/events', { schema: { summary: 'List events, newest first', querystring: ListEventsQuery, response: { 200: EventList } } }, async (request) =>
    listEvents(db, accountOf(request).id, request.query, identityWindowStart(settings.identityRetentionDays)),
  );
  app.get('/events/:id', { schema: { summary: 'Get an event with each delivery attempt', params: EventIdParams, response: { 200: Event } } }, async (request) => getEvent(db, accountOf(request).id, request.params.id));
  app.post(
    '/events/:id/redeliver',
    {
      schema: {
        summary: 'Send the failed deliveries of an event again',
        params: EventIdParams,
        response: {
          200: Event,
          409: { ...ErrorEnvelope, description: 'nothing_to_redeliver: none of its actions failed; event_erased: its person was erased.' },
        },
      },
    },
    async (request) =>
    redeliverEvent(db, accountOf(request).id, request.params.id),
  );
}
