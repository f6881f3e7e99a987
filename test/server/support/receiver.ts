/** A notification receiver for tests. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { answerHold } from '../../../src/demo/fakes/fake-server';

/**
 * The setting a service needs to send notifications to a receiver on this machine: the tests' services have public URLs
 * on hosts others would reach, where the default keeps notifications off this machine and private networks.
 */
export const LOCAL_RECEIVERS = { CNV_NOTIFICATION_PRIVATE_ADDRESSES: 'on' } as const;

/** A receiver on 127.0.0.1 that answers what it is told, and keeps every request it got. */
export interface Receiver {
  url: string;
  received: Array<{ path: string; headers: IncomingHttpHeaders; body: string }>;
  /** Statuses for the next requests, in order; 204 after that. 'hang' never answers. */
  answers: Array<number | 'hang'>;
  /** Holds every answer (now and later) until the returned function is called: requests are recorded, answers wait. */
  holdAnswers(): () => void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Receiver['received'] = [];
  const answers: Receiver['answers'] = [];
  const hanging: Array<() => void> = [];
  const answerHeld = answerHold();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      received.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = answers.shift() ?? 204;
      if (answer === 'hang') {
        hanging.push(() => res.destroy());
        return;
      }
      await answerHeld.released();
      if (answer >= 300 && answer < 400) res.writeHead(answer, { location: '/elsewhere' }).end();
      else res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks/cnv`,
    received,
    answers,
    holdAnswers: answerHeld.hold,
    close: async () => {
      for (const h of hanging) h();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
