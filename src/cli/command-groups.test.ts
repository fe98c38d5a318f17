import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_GROUPS, programFor } from './command-groups.ts';
import { buildProgram } from './program.ts';
import { commandWord, hoistGlobalOptions } from './root.ts';

const argvOf = (...args: string[]) => hoistGlobalOptions(['node', 'hearth', ...args]);
const namesOf = (program: Command) => program.commands.flatMap((c) => [c.name(), ...c.aliases()]);

/** A command's help and its subcommands', depth first: what a user of that command sees. */
function helpTree(command: Command): string[] {
  return [command.helpInformation(), ...command.commands.flatMap(helpTree)];
}

describe('command groups', () => {
  it('name every top-level command of the whole tree except completion, each once', () => {
    const grouped = COMMAND_GROUPS.flatMap((g) => g.names);
    expect(new Set(grouped).size).toBe(grouped.length);
    expect([...grouped].sort()).toEqual(namesOf(buildProgram()).filter((n) => !['completion', '__complete'].includes(n)).sort());
  });

  it('mount, for each command, exactly what the whole tree has for it', async () => {
    const whole = buildProgram(argvOf());
    for (const group of COMMAND_GROUPS) {
      const program = await programFor(argvOf(group.names[0]));
      expect(namesOf(program).sort()).toEqual([...group.names].sort());
      for (const command of program.commands) {
        const same = whole.commands.find((c) => c.name() === command.name())!;
        expect(helpTree(command)).toEqual(helpTree(same));
      }
      expect(program.helpInformation()).toContain('--output <format>');
    }
  });

  it('give the whole tree when no group names the command', async () => {
    const all = namesOf(buildProgram()).length;
    for (const args of [[], ['--help'], ['help', 'health'], ['--version'], ['completion', 'bash'], ['helth'], ['--bogus', 'health']]) {
      expect(namesOf(await programFor(argvOf(...args))).length).toBe(all);
    }
  });

  it('find the command after the global options, wherever they were written', () => {
    expect(commandWord(argvOf('--output', 'json', 'health'))).toBe('health');
    expect(commandWord(argvOf('health', '--output', 'json', '--wide'))).toBe('health');
    expect(commandWord(argvOf('--output=json', '--verbose', 'ns', 'list'))).toBe('ns');
    expect(commandWord(argvOf('--raw', '-h'))).toBeUndefined();
  });
});
