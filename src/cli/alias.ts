/**
 * `hearth alias create | get | list | delete <scope> …` (issue #6; admin spec "Aliases",
 * admin-wire-a §6.1): names for context, application and device ids, one namespace per scope.
 * The scope is the first argument (`context`, `application` or `device`); the name's grammar is
 * the node's to check, so its refusal (400) is printed as the node words it.
 *
 * `get` of an unknown alias prints that it does not exist and exits 1, so scripts can branch on it
 * (the node itself answers a lookup miss with 200 and a null value).
 */
import { Argument, type Command } from 'commander';
import type { AliasScope } from '../client/index.ts';
import { connectOptions, withCli } from './connect.ts';
import { UsageError } from './exit.ts';
import { idArg } from './id-args.ts';
import { refContext, resolveText } from './refs.ts';
import { renderTable } from './output.ts';

const SCOPES: AliasScope[] = ['context', 'application', 'device'];

const scopeArg = () => new Argument('<scope>', 'context, application or device').choices(SCOPES);

function deviceId(text: string): string {
  try {
    return idArg(text);
  } catch (err) {
    throw new UsageError(`<id>: ${(err as Error).message}`);
  }
}

export function registerAliasCommands(program: Command): void {
  const alias = program.command('alias').description('names for context, application and device ids');

  connectOptions(
    alias
      .command('create')
      .alias('add')
      .description('name an id (refused if the name is taken in that scope)')
      .addArgument(scopeArg())
      .argument('<name>', 'the alias: letters, digits, ".", "_", "-"; at most 50')
      .argument('<id>', 'the id it names: 64 hex; for contexts and applications also a unique prefix, another alias or @last'),
  ).action(
    withCli(async (cli, [scope, name, text]) => {
      const id = scope === 'device' ? deviceId(text) : await resolveText(refContext(cli), scope as 'context' | 'application', text, '<id>');
      if (scope !== 'device') cli.remember(scope as 'context' | 'application', id);
      await cli.client.aliases.create(scope as AliasScope, name, id, { signal: cli.signal });
      cli.out.result({ scope, name, value: id }, () => `${scope} alias "${name}" → ${id}`);
    }),
  );

  connectOptions(
    alias.command('get').description('the id an alias names (exit 1 if there is no such alias)').addArgument(scopeArg()).argument('<name>', 'the alias'),
  ).action(
    withCli(async (cli, [scope, name]) => {
      const value = await cli.client.aliases.lookup(scope as AliasScope, name, { signal: cli.signal });
      cli.out.result({ scope, name, value }, () => value ?? `no ${scope} alias "${name}" (see: hearth alias list ${scope})`);
      if (value === null) process.exitCode = 1;
    }),
  );

  connectOptions(alias.command('list').alias('ls').description('every alias of a scope').addArgument(scopeArg())).action(
    withCli(async (cli, [scope]) => {
      const map = await cli.client.aliases.list(scope as AliasScope, { signal: cli.signal });
      const rows = Object.entries(map)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, value]) => ({ name, value }));
      // JSON: the node's map {alias: id}, as the SDK returns it; human: a table sorted by name.
      cli.out.result({ ...map }, () =>
        rows.length === 0
          ? `no ${scope} aliases (create one with: hearth alias create ${scope} <name> <id>)`
          : renderTable(rows, [
              { header: 'alias', value: (r) => r.name },
              { header: 'id', value: (r) => r.value },
            ]),
      );
    }),
  );

  connectOptions(
    alias.command('delete').alias('rm').description('remove an alias (the id it named is untouched)').addArgument(scopeArg()).argument('<name>', 'the alias'),
    { destructive: true },
  ).action(
    withCli(async (cli, [scope, name]) => {
      await cli.confirm(`delete ${scope} alias "${name}"?`);
      await cli.client.aliases.delete(scope as AliasScope, name, { signal: cli.signal });
      cli.out.result({ scope, name, deleted: true }, () => `deleted ${scope} alias "${name}"`);
    }),
  );
}
