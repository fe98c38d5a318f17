#!/usr/bin/env node
/**
 * The `hearth` command line (src/cli/program.ts builds the tree; src/cli/command-groups.ts mounts
 * only the group of the command given). Exit codes: 0 ok, 1 node error,
 * 2 usage error, 3 auth failure (src/cli/exit.ts); 141 when the reader of the output went away.
 * Every failure is one line on stderr (issue #16); `--verbose` adds the stack trace.
 */
import { printFailure, Reported } from './cli/connect.ts';
import { describeFailure, EXIT_USAGE } from './cli/exit.ts';
import { programFor } from './cli/command-groups.ts';
import type { GlobalOpts } from './cli/options.ts';
import { hoistGlobalOptions } from './cli/root.ts';

const argv = hoistGlobalOptions(process.argv);
const globals: GlobalOpts = {
  output: argv.some((a, i) => a === '--output=json' || (a === '--output' && argv[i + 1] === 'json')) ? 'json' : undefined,
  verbose: argv.includes('--verbose'),
};

/**
 * `hearth … | head`: the reader closed the pipe. Not a failure of the command's: one line saying
 * so (on stderr, which is still open), and the shell's exit status for a broken pipe.
 */
const EXIT_BROKEN_PIPE = 141;
let pipeClosed = false;
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  if (pipeClosed) return;
  pipeClosed = true;
  process.stderr.write('hearth: stopped writing: the reader of the output closed it (broken pipe)\n', () => process.exit(EXIT_BROKEN_PIPE));
});

function fail(err: unknown): never {
  if (err instanceof Reported) process.exit(err.exitCode); // already printed by the command
  const failure = describeFailure(err);
  printFailure(failure, globals, err);
  process.exit(failure.code);
}

programFor(argv)
  .then((program) => program.parseAsync(argv))
  .catch((err: unknown) => {
    const code = (err as { code?: string }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version') process.exit(0);
    if (typeof code === 'string' && code.startsWith('commander.')) process.exit(EXIT_USAGE);
    fail(err);
  });
