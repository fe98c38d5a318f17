/**
 * What the `hearth` binary mounts for a command line (issue #33: a CLI command starts in < 300 ms).
 * The whole tree (program.ts) loads every command's module and what it imports (the workflow's
 * YAML parser, the app bundler, …), which every command paid for before it ran. Here each
 * top-level command names the group that registers it, loaded by a dynamic `import()` (the bundle
 * splits there), and only that group is mounted on the program of root.ts. A command line whose
 * command is not in a group (`--help`, `help`, `--version`, completion, an unknown word, nothing)
 * gets the whole tree, so help, suggestions and completion see every command.
 *
 * Each group registers exactly what the whole tree registers for those names
 * (command-groups.test.ts compares them).
 */
import type { Command } from 'commander';
import { commandWord, rootProgram } from './root.ts';

type Register = (program: Command) => void;

/** Top-level command names and aliases → the registration the whole tree runs for them. */
export const COMMAND_GROUPS: ReadonlyArray<{ names: readonly string[]; load: () => Promise<Register> }> = [
  { names: ['init', 'run', 'dev'], load: async () => (await import('./node-commands.ts')).registerNodeCommands },
  { names: ['login', 'logout', 'profile'], load: async () => (await import('./session.ts')).registerSessionCommands },
  { names: ['health', 'identity', 'peers'], load: async () => (await import('./status.ts')).registerStatusCommands },
  { names: ['config'], load: async () => (await import('./config.ts')).registerConfigCommands },
  {
    names: ['app'],
    load: async () => {
      const [{ registerAppCommands }, { registerAppNodeCommands }] = await Promise.all([import('./app.ts'), import('./app-node.ts')]);
      return (program) => void registerAppNodeCommands(registerAppCommands(program));
    },
  },
  { names: ['blob'], load: async () => (await import('./blob.ts')).registerBlobCommands },
  { names: ['alias'], load: async () => (await import('./alias.ts')).registerAliasCommands },
  { names: ['key'], load: async () => (await import('./key.ts')).registerKeyCommands },
  { names: ['namespace', 'ns'], load: async () => (await import('./namespace.ts')).registerNamespaceCommands },
  { names: ['group'], load: async () => (await import('./group.ts')).registerGroupCommands },
  {
    names: ['context'],
    load: async () => {
      const [{ registerContextCommands }, { registerCallCommand }] = await Promise.all([import('./context.ts'), import('./call.ts')]);
      return (program) => void registerCallCommand(registerContextCommands(program));
    },
  },
  { names: ['call'], load: async () => (await import('./call.ts')).registerCallCommand },
  { names: ['events'], load: async () => (await import('./events.ts')).registerEventsCommands },
  { names: ['tee'], load: async () => (await import('./tee.ts')).registerTeeCommands },
  { names: ['use'], load: async () => (await import('./use.ts')).registerUseCommand },
  { names: ['workflow'], load: async () => (await import('./workflow/command.ts')).registerWorkflowCommands },
];

/** The program to parse hoisted `argv` with: the command's group alone, or the whole tree. */
export async function programFor(argv: readonly string[]): Promise<Command> {
  const word = commandWord(argv);
  const group = word === undefined ? undefined : COMMAND_GROUPS.find((g) => g.names.includes(word));
  if (!group) return (await import('./program.ts')).buildProgram(argv);
  const program = rootProgram(argv);
  (await group.load())(program);
  return program;
}
