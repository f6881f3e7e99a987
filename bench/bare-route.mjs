/** The baseline: a bare Fastify app with one route answering 204, no logging, no hooks, no database. */
import Fastify from 'fastify';

/** Path of the bare route. */
export const BARE_PATH = '/bare';

/** Starts the bare app on a loopback port; it accepts the same text/plain body a snapshot carries. */
export async function startBareRoute() {
  const app = Fastify({ logger: false });
  app.post(BARE_PATH, (_request, reply) => reply.code(204).send());
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address();
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}
