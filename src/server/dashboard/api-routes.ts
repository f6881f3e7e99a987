/**
 * POST /v1/dashboard/sign-in-links: a one-time dashboard sign-in link for the API key's account. This is what
 * `cnv dashboard` asks the running service for when the service holds the embedded store (the command cannot open it).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../http/app';
import { accountOf, apiKeyIdOf } from '../http/auth';
import { issueSignInLink } from './sessions';

export default async function dashboardApiRoutes(fastify: FastifyInstance, { db, settings }: AppContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const SignInLink = Type.Object(
    {
      url: Type.String({ description: 'The one-time sign-in link (single use).' }),
      expires_at: Type.String({ format: 'date-time', description: 'When it stops working (15 minutes).' }),
    },
    { title: 'SignInLink', additionalProperties: false },
  );
  app.post(
    '/dashboard/sign-in-links',
    {
      schema: {
        summary: "A one-time dashboard sign-in link for the key's account",
        tags: ['Dashboard'],
        body: Type.Optional(Type.Object({}, { additionalProperties: false })),
        response: { 201: SignInLink },
      },
    }, async (request, reply) => {
    // The link, and the session it opens, end when this key is revoked (accounts/sql.ts, revokeApiKey).
    const link = await issueSignInLink(db, settings, accountOf(request).id, new Date(), apiKeyIdOf(request));
    return reply.status(201).send({ url: link.url, expires_at: link.expiresAt.toISOString() });
  });
}
