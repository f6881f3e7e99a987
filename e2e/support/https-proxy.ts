/**
 * A TLS-terminating reverse proxy in front of the real service, as production runs it: pages on https load the
 * loader and send their snapshots to `https://cnv.test:<port>` (an https page may not call an http service: mixed
 * content), and every request goes on unchanged to the service's http port on loopback, with the usual
 * `X-Forwarded-*` headers (the service trusts its proxy). The Host header is kept. Nothing is answered here.
 */
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Certificate } from './tls';

export interface HttpsProxy {
  port: number;
  close(): Promise<void>;
}

/** Starts the proxy on 127.0.0.1 (a free port), forwarding to http://127.0.0.1:<targetPort>. */
export async function startHttpsProxy(certificate: Certificate, targetPort: number): Promise<HttpsProxy> {
  const server: Server = createServer(certificate, (req, res) => {
    const headers = { ...req.headers };
    headers['x-forwarded-proto'] = 'https';
    headers['x-forwarded-host'] = req.headers.host ?? '';
    headers['x-forwarded-for'] = req.socket.remoteAddress ?? '127.0.0.1';
    const upstream = httpRequest({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`e2e https proxy: the service did not answer: ${error.message}`);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
