/** /v1/erasures: erase a person, and the audit list. Handlers only translate HTTP to domain calls. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../http/app';
import { accountOf } from '../../http/auth';
import { erasePerson, erasureTarget, listErasures } from './erasures';
import { erasureHash } from './keyed-hash';
import { Erasure, ErasureBody, ErasureList, ListErasuresQuery } from './schemas';

export default async function erasureRoutes(fastify: FastifyInstance, { db, settings }: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const hash = erasureHash(settings);
  app.post('/erasures', { schema: { summary: 'Erase a person from every site of the account', body: ErasureBody, response: { 200: Erasure } } }, async (request) =>
    erasePerson(db, accountOf(request).id, erasureTarget(request.body ?? {}), hash),
  );
  app.get('/erasures', { schema: { summary: 'List erasures (never the erased values)', querystring: ListErasuresQuery, response: { 200: ErasureList } } }, async (request) =>
    listErasures(db, accountOf(request).id, request.query),
  );
}
