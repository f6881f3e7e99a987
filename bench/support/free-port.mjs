/** A free loopback port, for a service whose public URLs must name its port before it listens. */
import { createServer } from 'node:net';

/** Asks the OS for an ephemeral port on 127.0.0.1 and releases it. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
