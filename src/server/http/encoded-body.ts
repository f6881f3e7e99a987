/**
 * A response body compressed once in every encoding the service offers (brotli, gzip) and sent in the one the
 * request's Accept-Encoding prefers (q-values honoured, through `negotiator`), identity otherwise; each encoding with
 * its own strong ETag, `Vary: Accept-Encoding`, and a 304 without a body when If-None-Match names the content.
 */
import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import Negotiator from 'negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { etagMatches } from './static-file';

/** The content codings offered, best first (the server's choice when the request weighs them the same). */
const ENCODINGS = ['br', 'gzip', 'identity'] as const;
export type ContentEncoding = (typeof ENCODINGS)[number];

/** One body in every offered encoding, each with its ETag. */
export interface EncodedBody {
  bodies: Record<ContentEncoding, Buffer>;
  etags: Record<ContentEncoding, string>;
}

/**
 * Compresses a body once in every offered encoding, at the highest levels (brotli 11, gzip 9: done once per content,
 * never per request). The ETags share a hash of the content and differ by encoding, as strong validators must.
 */
export function encodeBody(content: string | Buffer): EncodedBody {
  const identity = Buffer.from(content);
  const hash = createHash('sha256').update(identity).digest('base64url').slice(0, 32);
  return {
    bodies: {
      identity,
      gzip: gzipSync(identity, { level: 9 }),
      br: brotliCompressSync(identity, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length },
      }),
    },
    etags: { identity: `"${hash}"`, gzip: `"${hash}-gzip"`, br: `"${hash}-br"` },
  };
}

/** negotiator 1.x's encoding(), whose `preferred` option (the tie-break order) its published types (0.6) lack. */
interface EncodingNegotiator {
  encoding(available: readonly string[], options: { preferred: readonly string[] }): string | undefined;
}

/**
 * The encoding to send for an Accept-Encoding header: the offered one with the highest q-value, brotli before gzip
 * when the request weighs them the same (browsers list gzip first); identity when none is acceptable.
 */
export function negotiateEncoding(acceptEncoding: string | string[] | undefined): ContentEncoding {
  const negotiator = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }) as unknown as EncodingNegotiator;
  return (negotiator.encoding(ENCODINGS, { preferred: ENCODINGS }) as ContentEncoding | undefined) ?? 'identity';
}

/**
 * Sends an encoded body (its headers set on reply first by the caller): the negotiated encoding with its ETag and
 * Vary, or a 304 without a body when If-None-Match names any encoding of this content (the browser's cached copy is
 * the same content, whichever encoding it came in).
 */
export function sendEncoded(request: FastifyRequest, reply: FastifyReply, body: EncodedBody, contentType: string): FastifyReply {
  const encoding = negotiateEncoding(request.headers['accept-encoding']);
  reply.header('vary', 'Accept-Encoding').header('etag', body.etags[encoding]);
  const ifNoneMatch = request.headers['if-none-match'];
  if (ENCODINGS.some((e) => etagMatches(ifNoneMatch, body.etags[e]))) return reply.code(304).send();
  if (encoding !== 'identity') reply.header('content-encoding', encoding);
  return reply.header('content-type', contentType).send(body.bodies[encoding]);
}
