#!/usr/bin/env node
/**
 * The `hearth` command line (src/cli/program.ts builds the tree). Exit codes: 0 ok, 1 node error,
 * 2 usage error, 3 auth failure (src/cli/exit.ts).
 */
import { HomeExistsError } from './config/home.ts';
import { AdminMissingError, CredentialsError } from './node/credentials.ts';
import { HearthError } from './errors.ts';
import { Reported } from './cli/connect.ts';
import { EXIT_NODE, EXIT_USAGE, UsageError } from './cli/exit.ts';
import { buildProgram } from './cli/program.ts';

function fail(err: unknown): never {
  if (err instanceof Reported) process.exit(err.exitCode); // already printed by the command
  const usage = err instanceof UsageError || err instanceof HomeExistsError || err instanceof CredentialsError;
  const known = usage || err instanceof AdminMissingError || err instanceof HearthError;
  const message = known || !(err instanceof Error) ? String((err as Error)?.message ?? err) : err.stack ?? err.message;
  process.stderr.write(`hearth: ${message}\n`);
  process.exit(usage ? EXIT_USAGE : EXIT_NODE);
}

buildProgram().parseAsync(process.argv).catch((err: unknown) => {
  const code = (err as { code?: string }).code;
  if (code === 'commander.helpDisplayed' || code === 'commander.version') process.exit(0);
  if (typeof code === 'string' && code.startsWith('commander.')) process.exit(EXIT_USAGE);
  fail(err);
});
