/**
 * `hearth use [<kind> <ref>]` (issue #25 §3): names the context, namespace or application that
 * `@last` stands for with this profile on this node (src/cli/recent.ts); without arguments, shows
 * what `@last` names now. Creating or using an id moves `@last` too, so a walkthrough can be typed
 * from memory: `hearth context create --application @last --group @last`.
 */
import { Argument, type Command } from 'commander';
import { connectOptions, withCli } from './connect.ts';
import { UsageError } from './exit.ts';
import { REMEMBERED_KINDS, type RememberedKind } from './recent.ts';
import { refContext, resolveText } from './refs.ts';

export function registerUseCommand(program: Command): void {
  connectOptions(
    program
      .command('use')
      .description('set what @last names (a context, namespace or application), or show it')
      .addArgument(new Argument('[kind]', 'context, namespace or application').choices(REMEMBERED_KINDS))
      .argument('[ref]', 'its id, unique prefix (6+ hex) or alias'),
  ).action(
    withCli(async (cli, [kind, ref]) => {
      if (kind !== undefined && ref !== undefined) {
        const id = await resolveText(refContext(cli), kind as RememberedKind, ref, '<ref>');
        cli.remember(kind as RememberedKind, id);
        cli.out.result({ kind, id }, () => `@last ${kind} is now ${id}`);
        return;
      }
      if (kind !== undefined) throw new UsageError(`name the ${kind}: hearth use ${kind} <id|prefix|alias>`);
      const recent = await cli.recent.get(cli.nodeUrl);
      const rows = REMEMBERED_KINDS.map((k) => ({ kind: k, id: recent[k] ?? null }));
      cli.out.table(rows, [
        { header: '@last', value: (r) => r.kind },
        { header: 'id', value: (r) => r.id },
      ]);
    }),
  );
}
