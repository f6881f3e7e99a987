/** /v1/destinations: the connected ad platform accounts (read-only; connecting is a handoff), and a connection test. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { getDestination, listDestinationRecords, testDestination } from './destinations';
import { Destination, DestinationIdParams, DestinationList, DestinationTestResult, ListDestinationsQuery, TestDestinationBody } from './schemas';

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
}
