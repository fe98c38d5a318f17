/**
 * The `hearth` program itself, without its commands: its global options (issue #16) — `--output`,
 * `--wide`, `--raw`, `--verbose` — accepted in any position: {@link hoistGlobalOptions} moves them
 * in front of the command before commander parses, and every command reads them with
 * `optsWithGlobals()`. Kept apart from the command tree (program.ts) so a command can be mounted on
 * it alone (command-groups.ts, issue #33: a CLI command loads only what it runs).
 */
import { Command, InvalidArgumentError } from 'commander';
import { VERSION } from '../version.ts';
import { EXIT_USAGE } from './exit.ts';
import { OUTPUT_FORMATS, type OutputFormat } from './output.ts';

/** `--output` values; `human` is the name older scripts use for `table`. */
export function parseFormat(value: string): OutputFormat {
  if (value === 'human') return 'table';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(value)) throw new InvalidArgumentError(`must be one of ${OUTPUT_FORMATS.join(', ')}`);
  return value as OutputFormat;
}

const FLAGS = new Set(['--wide', '--raw', '--verbose']);

/**
 * Moves the global options (and `--output <format>`) from wherever they are to just after the
 * program name, so `hearth context list --output json` and `hearth --output json context list`
 * mean the same. Arguments after `--` are left alone.
 */
export function hoistGlobalOptions(argv: readonly string[]): string[] {
  const head = argv.slice(0, 2);
  const globals: string[] = [];
  const rest: string[] = [];
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (FLAGS.has(arg) || arg.startsWith('--output=')) globals.push(arg);
    else if (arg === '--output' && i + 1 < argv.length) globals.push(arg, argv[++i]);
    else rest.push(arg);
  }
  return [...head, ...globals, ...rest];
}

/**
 * The word naming the command in hoisted `argv` (what follows the global options), or undefined
 * when something else comes first (`--help`, `--version`, an unknown option) or nothing does.
 */
export function commandWord(argv: readonly string[]): string | undefined {
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i];
    if (FLAGS.has(arg) || arg.startsWith('--output=')) continue;
    if (arg === '--output') {
      i++;
      continue;
    }
    return arg.startsWith('-') ? undefined : arg;
  }
  return undefined;
}

/** The program with its global options and no commands. */
export function rootProgram(argv: readonly string[]): Command {
  const program = new Command('hearth')
    .description('A node for WebAssembly applications and their shared state')
    .version(VERSION)
    .option('--output <format>', 'json, table or plain (tab-separated, no header); any position', parseFormat, 'table' as OutputFormat)
    .option('--wide', 'tables show values in full instead of fitting 100 columns')
    .option('--raw', 'byte fields as the node sends them (arrays of numbers) instead of text or hex')
    .option('--verbose', 'on failure, print the stack trace after the message')
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
  return program;
}

function wantsJson(argv: readonly string[]): boolean {
  return argv.some((arg, i) => arg === '--output=json' || (arg === '--output' && argv[i + 1] === 'json'));
}
