/** /v1/destinations: the connected ad platform accounts (read-only; connecting is a handoff), a connection test, and redelivery of what failed. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { getDestination, listDestinationRecords, redeliverDestination, testDestination } from './destinations';
import {
  Destination, DestinationIdParams, DestinationList, DestinationRedeliveryResult, DestinationTestResult, ListDestinationsQuery, RedeliverDestinationBody,
  TestDestinationBody,
} from './schemas';

export default async function destinationRoutes(fastify: FastifyInstance, { db, settings }: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/destinations', { schema: { summary: 'List connected destinations', querystring: ListDestinationsQuery, response: { 200: DestinationList } } }, async (request) =>
    listDestinationRecords(db, accountOf(request).id, request.query),
  );
  app.get('/destinations/:id', { schema: { summary: 'Get a destination', params: DestinationIdParams, response: { 200: Destination } } }, async (request) =>
    getDestination(db, accountOf(request).id, request.params.id),
  );
  app.post('/destinations/:id/test', {
    schema: { summary: 'Test a connection without recording a conversion', params: DestinationIdParams, body: TestDestinationBody, response: { 200: DestinationTestResult } },
  }, async (request) =>
    testDestination(db, settings, accountOf(request).id, request.params.id, request.body?.conversion_id),
  );
  app.post('/destinations/:id/redeliver', {
    schema: {
      summary: "Send the destination's failed deliveries again",
      description:
        'After fixing what the platform refused (a permission, a conversion action missing in the ad account), queues every failed delivery to this ' +
        "destination again, oldest events first, at most limit events a call (has_more: call again). Only this destination's deliveries go; an erased person's events never do.",
      params: DestinationIdParams,
      body: RedeliverDestinationBody,
      response: { 200: DestinationRedeliveryResult },
    },
  }, async (request) =>
    redeliverDestination(db, accountOf(request).id, request.params.id, request.body),
  );
}
