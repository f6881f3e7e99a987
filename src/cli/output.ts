/** Where a command writes: process.stdout / process.stderr, or a buffer in tests. */
export interface Output {
  write(text: string): unknown;
}

/** Control characters but the newline and the tab: C0, DEL and C1 (ESC starts a terminal's escape sequences). */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * An Output that writes every control character but the newline and the tab as a visible `\uXXXX`. What a command
 * prints comes partly from accounts (site and flow names, key labels): raw, an ESC sequence in one would clear the
 * operator's screen, forge lines or links, or retitle the terminal. `\uXXXX` is also what JSON would write.
 */
export function terminalSafe(output: Output): Output {
  return {
    write: (text: string) =>
      output.write(text.replace(CONTROL_CHARACTERS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)),
  };
}
