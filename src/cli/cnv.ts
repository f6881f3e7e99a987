/** The `cnv` command (package bin): see `cnv help`. */
import { runCli } from './run';

process.exitCode = await runCli(process.argv.slice(2), { out: process.stdout, err: process.stderr });
