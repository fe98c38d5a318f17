/**
 * The whole `hearth` command tree: the node's own commands (`init | run | dev`) and the operator
 * commands, on the program of root.ts (its global options). Built by a function so the CLI
 * reference (docs/cli-reference.md) is generated from the same tree the binary parses. The binary
 * builds it only when the command line names no single command group (help, an unknown word,
 * completion): command-groups.ts mounts just the group a command belongs to.
 */
import type { Command } from 'commander';
import { registerOperatorCommands } from './index.ts';
import { registerNodeCommands } from './node-commands.ts';
import { registerCompletionCommands } from './completion.ts';
import type { GlobalOpts } from './options.ts';
import { rootProgram } from './root.ts';

export type { GlobalOpts };

export function buildProgram(argv: readonly string[] = process.argv): Command {
  const program = rootProgram(argv);
  registerNodeCommands(program);
  registerOperatorCommands(program);
  registerCompletionCommands(program);
  return program;
}
