/** Helpers for measuring scripts' bytes; the measure itself (raw, gzip -9, brotli -11) is build.mjs's `measure`. */

/** The code without a trailing `//# sourceMappingURL=` comment, which a browser never executes. */
export function withoutSourceMapComment(code) {
  return code.replace(/\n?\/\/# sourceMappingURL=\S*\s*$/, '');
}
