/** Runs `cnv …` in process, as the command line does, and captures what it writes and its exit code. */
import { runCli } from '../../../src/cli/run';
import type { Database } from '../../../src/server/db/db';

export async function cnv(argv: string[], options: { db?: Database; env?: NodeJS.ProcessEnv } = {}) {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    out: { write: (text: string) => (out += text) },
    err: { write: (text: string) => (err += text) },
    ...options,
    env: { CNV_DEMO_PORT: 'off', CNV_PUBLIC_URL: 'https://api.cnv.test', ...options.env },
  });
  return { code, out, err };
}
