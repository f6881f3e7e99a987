/**
 * POST /v1/dashboard/sign-in-links: a one-time dashboard sign-in link for the API key's account. This is what
 * `cnv dashboard` asks the running service for when the service holds the embedded store (the command cannot open it).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../http/app';
import { accountOf } from '../http/auth';
import { issueSignInLink } from './sessions';

export default async function dashboardApiRoutes(fastify: FastifyInstance, { db, settings }: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/dashboard/sign-in-links', { schema: { body: Type.Optional(Type.Object({}, { additionalProperties: false })) } }, async (request, reply) => {
    const link = await issueSignInLink(db, settings, accountOf(request).id);
    return reply.status(201).send({ url: link.url, expires_at: link.expiresAt.toISOString() });
  });
}
