/**
 * The whole `hearth` command tree: the node's own commands (`init | run | dev`) and the operator
 * commands. Built by a function so the CLI reference (docs/cli-reference.md) is generated from the
 * same tree the binary parses.
 */
import { Command } from 'commander';
import { VERSION } from '../version.ts';
import { registerOperatorCommands } from './index.ts';
import { registerNodeCommands } from './node-commands.ts';
import { EXIT_USAGE } from './exit.ts';

export function buildProgram(argv: readonly string[] = process.argv): Command {
  const program = new Command('hearth')
    .description('A node for WebAssembly applications and their shared state')
    .version(VERSION)
    // `--version` after a subcommand is that command's own option (`app bundle --version 1.2.0`)
    .enablePositionalOptions()
    .exitOverride();
  // A usage error found while parsing is one JSON object on stderr too when JSON was asked for;
  // subcommands inherit this setting from the program.
  if (wantsJson(argv)) {
    program.configureOutput({
      outputError: (text, write) => write(`${JSON.stringify({ error: text.replace(/^error: /, '').trim(), exitCode: EXIT_USAGE })}\n`),
    });
  }
  registerNodeCommands(program);
  registerOperatorCommands(program);
  return program;
}

function wantsJson(argv: readonly string[]): boolean {
  return argv.some((arg, i) => arg === '--output=json' || (arg === '--output' && argv[i + 1] === 'json'));
}
