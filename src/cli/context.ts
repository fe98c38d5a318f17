/**
 * `hearth context list | create | get | delete | identities | query | join | leave | update | sync |
 * watch` (and `status`, `state`: context-status.ts, context-state.ts) (issue #6; reference CLI `meroctl context`, product.md B4) over the context routes of
 * `/admin-api` (admin spec "Contexts"; docs/contexts.md). A context argument is an id (64 hex or
 * base58) or a context alias the node resolves; ids are checked when the command line is parsed.
 * `delete` and `leave` ask for confirmation unless `--yes`.
 */
import type { Command } from 'commander';
import { RpcError, stringifyJson, type Context } from '../client/index.ts';
import { readSecretFrom } from './prompt.ts';
import { readableRpcError } from './call.ts';
import { applicationRefArg, contextRefArg, humanValue, parseCount, parseIdArg, readJsonArg, resolveRef, type Ref } from './context-args.ts';
import { refArg } from './refs.ts';

/** `--group`: a group or namespace; `@last` names the last namespace. */
const groupOrNamespaceArg = (value: string) => (value === '@last' ? refArg('namespace', undefined, '--group')(value) : refArg('group', 'group id', '--group')(value));
import { connectOptions, withCli, type Cli, type ConnectOpts } from './connect.ts';
import { renderRecord } from './output.ts';
import { watchEvents } from './events.ts';
import { registerContextIntentCommands } from './intents.ts';
import { registerContextStatusCommand } from './context-status.ts';
import { registerContextStateCommand } from './context-state.ts';

const contextArg = (cmd: Command) => cmd.argument('<context>', 'context id, unique prefix (6+ hex), alias or @last', contextRefArg());
/** commander hands over what parseRefArg returned; withCli types positionals as strings. */
const contextOf = (cli: Cli, ref: unknown) => resolveRef(cli, ref as Ref, 'context', '<context>');

/** Aliases of a scope by the id they name (an id may have several). */
export async function aliasesOf(cli: Cli, scope: 'context' | 'application'): Promise<Map<string, string[]>> {
  const byId = new Map<string, string[]>();
  for (const [name, id] of Object.entries(await cli.client.aliases.list(scope, { signal: cli.signal }))) byId.set(id, [...(byId.get(id) ?? []), name].sort());
  return byId;
}

/** What people call each installed application: its alias, else its package name. */
async function applicationNames(cli: Cli): Promise<Map<string, string>> {
  const [apps, aliases] = await Promise.all([cli.client.applications.list({ signal: cli.signal }), aliasesOf(cli, 'application')]);
  return new Map(apps.map((a) => [a.id, aliases.get(a.id)?.join(', ') ?? a.package ?? a.id]));
}

/** dagHeads travel as byte arrays; people read them as hex. */
const headsHex = (c: Context) => (c.dagHeads ?? []).map((h) => Buffer.from(h).toString('hex'));

interface ListFlags extends ConnectOpts {
  application?: Ref;
}

interface CreateFlags extends ConnectOpts {
  application: Ref;
  group: string;
  params?: string;
  seed?: string;
  name?: string;
  service?: string;
  identitySecretFile?: string;
}

export function registerContextCommands(program: Command): Command {
  const context = program.command('context').description('contexts: instances of an application with their own state, in a group');

  connectOptions(
    context
      .command('list')
      .alias('ls')
      .description('list the contexts this node holds')
      .option('--application <id|alias>', 'only the contexts of this application', applicationRefArg()),
  ).action(
    withCli<ListFlags>(async (cli, _args, flags) => {
      const opts = { signal: cli.signal };
      const [rows, contextAliases, appNames] = await Promise.all([
        flags.application
          ? cli.client.contexts.forApplication(await resolveRef(cli, flags.application, 'application', '--application'), opts)
          : cli.client.contexts.list(opts),
        aliasesOf(cli, 'context'),
        applicationNames(cli),
      ]);
      // JSON keeps the node's rows and adds the aliases; the table names each context and application
      const listed = rows.map((c) => ({ ...c, aliases: contextAliases.get(c.id) ?? [] }));
      cli.out.table(
        listed,
        [
          { header: 'context', value: (c) => c.id },
          { header: 'name', value: (c) => (c.aliases.length ? c.aliases.join(', ') : c.name) },
          { header: 'application', value: (c) => appNames.get(c.applicationId) ?? c.applicationId },
          { header: 'group', value: (c) => c.groupId },
        ],
        'no contexts yet: hearth context create --application <id> --group <id>',
      );
    }),
  );

  connectOptions(
    context
      .command('create')
      .description("create a context in a group and run its application's init")
      .requiredOption('--application <id|alias>', 'the installed application (the group\'s target application wins)', applicationRefArg())
      .requiredOption('--group <id>', 'the group or namespace to register the context in (id, prefix or @last for the namespace)', groupOrNamespaceArg)
      .option('--params <json|@file|->', "arguments of the application's init, as JSON, @file, or - for stdin")
      .option('--seed <hex>', '32 bytes the context id derives from (default: random)', parseIdArg)
      .option('--name <name>', 'a display name')
      .option('--service <name>', 'the service of a multi-service bundle')
      .option('--identity-secret-file <file>', "the creator's member key (32-byte Ed25519 private key, hex) from a file; default: the node's key"),
  ).action(
    withCli<CreateFlags>(async (cli, _args, flags) => {
      const applicationId = await resolveRef(cli, flags.application, 'application', '--application');
      const params = await readJsonArg(flags.params, '--params', undefined);
      const identitySecret = flags.identitySecretFile
        ? (await readSecretFrom({ label: 'identity secret', file: flags.identitySecretFile })).trim()
        : undefined;
      const created = await cli.client.contexts.create(
        {
          groupId: flags.group,
          applicationId,
          // init reads its arguments as UTF-8 JSON bytes (docs/contexts.md); written back u64-exact
          initializationParams: params === undefined ? [] : new TextEncoder().encode(stringifyJson(params)),
          contextSeed: flags.seed,
          identitySecret,
          serviceName: flags.service,
          name: flags.name,
        },
        { signal: cli.signal },
      );
      cli.remember('context', created.contextId);
      cli.out.result(created, () =>
        [`created context ${created.contextId}`, `  group:      ${created.groupId}`, `  member key: ${created.memberPublicKey}`].join('\n'),
      );
    }),
  );

  connectOptions(contextArg(context.command('get').description('show one context'))).action(
    withCli(async (cli, [ref]) => {
      const c = await cli.client.contexts.get(await contextOf(cli, ref), { signal: cli.signal });
      cli.out.result(c, () =>
        renderRecord({
          context: c.id,
          name: c.name,
          application: c.applicationId,
          version: c.applicationVersion,
          service: c.serviceName,
          'state hash': c.contextStateHash === 'f'.repeat(64) ? `${c.contextStateHash} (no state on this node yet)` : c.contextStateHash,
          'dag heads': headsHex(c),
        }),
      );
    }),
  );

  connectOptions(contextArg(context.command('delete').alias('del').description('delete a context from its group and this node')), { destructive: true }).action(
    withCli(async (cli, [ref]) => {
      const contextId = await contextOf(cli, ref);
      await cli.confirm(`Delete context ${contextId} and its state on this node?`);
      const deleted = await cli.client.contexts.delete(contextId, { signal: cli.signal });
      cli.forget('context');
      cli.out.result({ contextId, deleted }, () => (deleted ? `deleted context ${contextId}` : `no context ${contextId} on this node: nothing deleted`));
    }),
  );

  connectOptions(
    contextArg(context.command('identities').description('member identities of a context')).option('--owned', 'only the identities this node holds the keys of'),
  ).action(
    withCli<ConnectOpts & { owned?: boolean }>(async (cli, [ref], flags) => {
      const contextId = await contextOf(cli, ref);
      const opts = { signal: cli.signal };
      const result = flags.owned ? await cli.client.contexts.identitiesOwned(contextId, opts) : await cli.client.contexts.identities(contextId, opts);
      cli.out.result(result, () =>
        result.identities.length === 0 ? '(none)' : ['IDENTITY', ...result.identities].join('\n'),
      );
    }),
  );

  connectOptions(
    contextArg(context.command('query').description('run a read-only method of a context (no state change) and print its output'))
      .argument('<method>', 'the read-only method')
      .option('--args <json|@file|->', 'the arguments as JSON, @file, or - for stdin'),
  ).action(
    withCli<ConnectOpts & { args?: string }>(async (cli, [ref, method], flags) => {
      const contextId = await contextOf(cli, ref);
      const args = await readJsonArg(flags.args, '--args', {});
      let output: unknown;
      try {
        output = await cli.client.contexts.query(contextId, method, args, { signal: cli.signal });
      } catch (err) {
        throw err instanceof RpcError ? readableRpcError(err) : err;
      }
      cli.out.result(output ?? null, () => humanValue(output, method));
    }),
  );

  connectOptions(contextArg(context.command('join').description("join a context of a group this node's account belongs to"))).action(
    withCli(async (cli, [ref]) => {
      const joined = await cli.client.contexts.join(await contextOf(cli, ref), { signal: cli.signal });
      cli.out.result(joined, () => `joined context ${joined.contextId} as ${joined.memberPublicKey}`);
    }),
  );

  connectOptions(contextArg(context.command('leave').description("stop being a member of a context on this node (the node's keys leave it)")), { destructive: true }).action(
    withCli(async (cli, [ref]) => {
      const contextId = await contextOf(cli, ref);
      await cli.confirm(`Leave context ${contextId}? Calls fail until this node joins it again.`);
      await cli.client.contexts.leave(contextId, { signal: cli.signal });
      cli.out.result({ contextId, left: true }, () => `left context ${contextId}`);
    }),
  );

  connectOptions(
    context
      .command('update')
      .description('move a context to another installed application (or version of it)')
      .argument('<context>', 'context id, unique prefix (6+ hex), alias or @last', contextRefArg())
      .requiredOption('--application <id|alias>', 'the installed application to run', applicationRefArg()),
  ).action(
    withCli<ConnectOpts & { application: Ref }>(async (cli, [ref], flags) => {
      const contextId = await contextOf(cli, ref);
      const applicationId = await resolveRef(cli, flags.application, 'application', '--application');
      await cli.client.contexts.updateApplication(contextId, applicationId, { signal: cli.signal });
      cli.out.result({ contextId, applicationId }, () => `context ${contextId} now runs application ${applicationId}`);
    }),
  );

  connectOptions(
    context
      .command('sync')
      .description('ask the node to sync one context (or every context) with its peers; progress arrives as SyncStatus events')
      .argument('[context]', 'context id, prefix or alias (default: every context)', contextRefArg()),
  ).action(
    withCli(async (cli, [ref]) => {
      const contextId = ref === undefined ? null : await contextOf(cli, ref);
      await cli.client.contexts.sync(contextId ?? undefined, { signal: cli.signal });
      cli.out.result({ contextId, requested: true }, () =>
        `sync of ${contextId === null ? 'every context' : `context ${contextId}`} requested; follow it with: hearth events watch`,
      );
    }),
  );

  connectOptions(
    contextArg(context.command('watch').alias('ws').description('print the events of one context as they happen (NDJSON with --output json); Ctrl-C to stop')).option(
      '--count <n>',
      'stop after n events',
      parseCount,
    ),
  ).action(
    withCli<ConnectOpts & { count?: number }>(async (cli, [ref], flags) => {
      const contextId = await contextOf(cli, ref);
      // An unknown context is refused here (404 with the node's message) rather than watched silently.
      await cli.client.contexts.get(contextId, { signal: cli.signal });
      await watchEvents(cli, { contextIds: [contextId], groupIds: [], count: flags.count });
    }),
  );
  registerContextIntentCommands(context);
  registerContextStatusCommand(context);
  registerContextStateCommand(context);
  return context;
}
