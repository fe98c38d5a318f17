/**
 * The whole `hearth` command tree: the node's own commands (`init | run | dev`) and the operator
 * commands. Built by a function so the CLI reference (docs/cli-reference.md) is generated from the
 * same tree the binary parses.
 */
import { Command } from 'commander';
import { VERSION } from '../version.ts';
import { registerOperatorCommands } from './index.ts';
import { registerNodeCommands } from './node-commands.ts';

export function buildProgram(): Command {
  const program = new Command('hearth')
    .description('A node for WebAssembly applications and their shared state')
    .version(VERSION)
    // `--version` after a subcommand is that command's own option (`app bundle --version 1.2.0`)
    .enablePositionalOptions()
    .exitOverride();
  registerNodeCommands(program);
  registerOperatorCommands(program);
  return program;
}
