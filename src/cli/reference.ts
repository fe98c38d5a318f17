/**
 * The CLI reference (docs/cli-reference.md), generated from the same commander tree the binary
 * parses (issue #6: "CLI reference (generated from the commands)"). `npm run docs:cli` rewrites
 * the file; a test fails when the committed file differs from the tree.
 */
import type { Command, Option } from 'commander';

const HEADER = `# hearth CLI reference

Generated from the command definitions by \`npm run docs:cli\`; do not edit by hand. The guide with
examples is [cli.md](cli.md). Exit codes: 0 ok, 1 node error, 2 usage error, 3 auth failure, 141 the reader of the output closed it (broken pipe).
`;

export function renderReference(program: Command): string {
  const globals = program.options.filter((o) => !o.hidden && !o.flags.includes('--version'));
  const sections: string[] = [HEADER];
  if (globals.length) {
    sections.push(
      ['## Global options', '', 'Accepted by every command, in any position on the command line.', '', '| option | meaning |', '|---|---|', ...globals.map((o) => `| \`${o.flags}\` | ${escape(optionText(o))} |`), ''].join('\n'),
    );
  }
  const visit = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      // hidden commands are plumbing (the completion scripts' `__complete`), not for people
      if (sub.name() === 'help' || (sub as unknown as { _hidden?: boolean })._hidden) continue;
      const full = [...path, sub.name()];
      if (sub.commands.length === 0 || sub.options.length > 0 || hasAction(sub)) sections.push(renderCommand(sub, full));
      else sections.push(`## ${full.join(' ')}\n\n${sub.description()}\n`);
      visit(sub, full);
    }
  };
  visit(program, [program.name()]);
  return `${sections.join('\n').trimEnd()}\n`;
}

function hasAction(cmd: Command): boolean {
  return Boolean((cmd as unknown as { _actionHandler?: unknown })._actionHandler);
}

function renderCommand(cmd: Command, path: string[]): string {
  const level = path.length <= 2 ? '##' : '###';
  const aliases = cmd.aliases().length ? ` (alias: ${cmd.aliases().join(', ')})` : '';
  const args = cmd.registeredArguments.map((a) => (a.required ? `<${a.name()}${a.variadic ? '...' : ''}>` : `[${a.name()}${a.variadic ? '...' : ''}]`));
  const lines = [`${level} ${path.join(' ')}${aliases}`, '', cmd.description(), '', '```', [...path, ...(cmd.options.length ? ['[options]'] : []), ...args].join(' '), '```', ''];
  const described = cmd.registeredArguments.filter((a) => a.description);
  if (described.length) {
    lines.push('| argument | meaning |', '|---|---|');
    for (const a of described) lines.push(`| \`${a.name()}\` | ${escape(a.description)} |`);
    lines.push('');
  }
  const options = cmd.options.filter((o) => !o.hidden);
  if (options.length) {
    lines.push('| option | meaning |', '|---|---|');
    for (const o of options) lines.push(`| \`${o.flags}\` | ${escape(optionText(o))} |`);
    lines.push('');
  }
  return lines.join('\n');
}

function optionText(o: Option): string {
  const fallback = o.defaultValue !== undefined && o.defaultValue !== false && !o.negate ? ` (default: ${o.defaultValueDescription ?? JSON.stringify(o.defaultValue)})` : '';
  return `${o.description}${fallback}`;
}

const escape = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
