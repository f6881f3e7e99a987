/** Transfer sizes of a script: raw, gzip at level 9 and brotli at quality 11 (the same measure as build.mjs prints). */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** Bytes of `code` raw, gzip -9 and brotli -11. */
export function measureBytes(code) {
  const buf = Buffer.from(code);
  return {
    raw: buf.length,
    gzip: gzipSync(buf, { level: 9 }).length,
    brotli: brotliCompressSync(buf, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: buf.length },
    }).length,
  };
}

/** The code without a trailing `//# sourceMappingURL=` comment, which a browser never executes. */
export function withoutSourceMapComment(code) {
  return code.replace(/\n?\/\/# sourceMappingURL=\S*\s*$/, '');
}
