/**
 * Shell completion (issue #34 §2): `hearth completion bash|zsh` prints a script for the shell to
 * source; the script asks the hidden `hearth __complete -- <words…>` for the candidates of the last
 * word. The candidates come from the command tree itself (commands, their aliases, options) and,
 * where an argument or option takes a context, application, namespace, group or blob, from the node:
 * its ids and its aliases. Completion never prints an error: an offline node, a missing login or a
 * slow answer (2 s deadline) just yields no ids.
 */
import type { Argument, Command, Option } from 'commander';
import { UsageError } from './exit.ts';
import { openCli } from './connect.ts';
import { aliasesOf } from './context.ts';
import { candidates, type RefKind } from './refs.ts';
import { OUTPUT_FORMATS } from './output.ts';

/** How long completion waits for the node. */
const NODE_DEADLINE_MS = 2_000;

/** Argument and option names that take an id of a kind (`<context>`, `--application`, …). */
const KIND_BY_NAME: Record<string, RefKind> = {
  context: 'context',
  app: 'application',
  application: 'application',
  namespace: 'namespace',
  group: 'group',
  blob: 'blob',
};

const BASH = `# hearth bash completion: source <(hearth completion bash)
_hearth_complete() {
  local IFS=$'\\n'
  COMPREPLY=($(hearth __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _hearth_complete hearth
`;

const ZSH = `#compdef hearth
# hearth zsh completion: source <(hearth completion zsh)
_hearth_complete() {
  local -a candidates
  candidates=("\${(@f)$(hearth __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a candidates
}
compdef _hearth_complete hearth
`;

export function registerCompletionCommands(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script: source <(hearth completion bash), or zsh')
    .argument('<shell>', 'bash or zsh')
    .action((shell: string) => {
      if (shell === 'bash') process.stdout.write(BASH);
      else if (shell === 'zsh') process.stdout.write(ZSH);
      else throw new UsageError(`${shell}: completion is written for bash and zsh`);
    });

  program
    .command('__complete', { hidden: true })
    .description('candidates for the last of the words typed after hearth (used by the completion scripts)')
    .argument('[words...]')
    .allowUnknownOption()
    .helpOption(false)
    .action(async (words: string[]) => {
      let out: string[] = [];
      try {
        out = await complete(program, words.length ? words : ['']);
      } catch {
        /* completion is quiet: nothing to offer */
      }
      if (out.length) process.stdout.write(`${out.join('\n')}\n`);
    });
}

/** The long options a command accepts, with its ancestors' (global options live on the program). */
function optionsOf(command: Command): Option[] {
  const all: Option[] = [];
  for (let c: Command | null = command; c; c = c.parent) all.push(...c.options);
  return all;
}

const visible = (command: Command): Command[] => command.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);

function findOption(command: Command, flag: string): Option | undefined {
  return optionsOf(command).find((o) => o.long === flag || o.short === flag);
}

/** The candidates for the last word, given the words typed before it. */
export async function complete(program: Command, words: string[]): Promise<string[]> {
  const current = words.at(-1) ?? '';
  let command = program;
  let positional = 0;
  const given: Record<string, string> = {};
  for (let i = 0; i < words.length - 1; i++) {
    const word = words[i];
    if (word.startsWith('-')) {
      const option = findOption(command, word.split('=')[0]);
      if (option && (option.required || option.optional) && !word.includes('=') && i + 1 < words.length - 1) given[option.attributeName()] = words[++i];
      continue;
    }
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub && positional === 0) command = sub;
    else positional++;
  }
  const startsWith = (list: string[]) => [...new Set(list)].filter((c) => c.startsWith(current));

  const previous = words.length >= 2 ? words.at(-2)! : '';
  const valued = previous.startsWith('-') ? findOption(command, previous) : undefined;
  if (valued && (valued.required || valued.optional)) {
    if (valued.long === '--output') return startsWith([...OUTPUT_FORMATS]);
    const kind = KIND_BY_NAME[valued.long?.replace(/^--/, '') ?? ''];
    return kind ? startsWith(await idsOf(kind, given)) : [];
  }
  if (current.startsWith('-')) return startsWith(optionsOf(command).flatMap((o) => (o.long ? [o.long] : [])));
  const subs = visible(command);
  if (subs.length && positional === 0) return startsWith(subs.flatMap((c) => [c.name(), ...c.aliases()]));
  const args = command.registeredArguments as readonly Argument[];
  const arg = args[Math.min(positional, args.length - 1)];
  const kind = arg ? KIND_BY_NAME[arg.name()] : undefined;
  return kind ? startsWith(await idsOf(kind, given)) : [];
}

/** Ids of a kind on the node the typed options name (or the default profile's), with their aliases. */
async function idsOf(kind: RefKind, given: Record<string, string>): Promise<string[]> {
  const cli = await openCli({ node: given.node, profile: given.profile, home: given.home, timeout: NODE_DEADLINE_MS, output: 'plain' });
  const signal = AbortSignal.timeout(NODE_DEADLINE_MS);
  const [ids, aliases] = await Promise.all([
    candidates(cli.client, kind, signal),
    kind === 'context' || kind === 'application' ? aliasesOf({ ...cli, signal }, kind).catch(() => new Map<string, string[]>()) : new Map<string, string[]>(),
  ]);
  return [...[...aliases.values()].flat(), ...ids.map((c) => c.id)];
}
