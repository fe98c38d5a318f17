/**
 * `hearth context intent info | perform` and `hearth group intents | context-intent |
 * governance-intent` (issue #15) over the delegated-execution routes (admin spec "Delegated
 * execution"; docs/contexts.md "Delegated execution"). The node is the relay; warrants and author
 * proofs are hex a member's device minted, given inline or as `@file`.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { connectOptions, withCli, type ConnectOpts } from './connect.ts';
import { contextRefArg, humanValue, readJsonArg, resolveRef, type Ref } from './context-args.ts';
import { UsageError } from './exit.ts';
import { idArgFor } from './id-args.ts';
import { renderRecord } from './output.ts';

const GROUP = 'group id';

interface DelegationFlags extends ConnectOpts {
  warrant: string;
  authorProof: string;
}

/** Hex given inline or as `@file` (trimmed); a usage error naming the flag otherwise. */
async function readHexArg(value: string, flag: string): Promise<string> {
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = await readFile(value.slice(1), 'utf8');
    } catch (err) {
      throw new UsageError(`${flag}: cannot read file ${value.slice(1)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  text = text.trim();
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(text)) throw new UsageError(`${flag} must be hex (inline or @file)`);
  return text.toLowerCase();
}

const delegationOptions = (cmd: Command) =>
  cmd
    .requiredOption('--warrant <hex|@file>', "the member's signed warrant (hex of its borsh bytes)")
    .requiredOption('--author-proof <hex|@file>', "the member device's AccountProof<DeviceCert> (hex)");

export function registerContextIntentCommands(context: Command): void {
  const intent = context.command('intent').description('delegated execution: run a method for a member under the member’s warrant');

  connectOptions(
    intent.command('info').description('what a warrant for this node must name, and whether it may act for members').argument('<context>', 'context id, unique prefix, alias or @last', contextRefArg()),
  ).action(
    withCli(async (cli, [ref]) => {
      const id = await resolveRef(cli, ref as unknown as Ref, 'context', '<context>');
      const info = await cli.client.contexts.intents(id, { signal: cli.signal });
      cli.out.result(info, () => renderRecord({ ...info }));
    }),
  );

  connectOptions(
    delegationOptions(
      intent
        .command('perform')
        .description('run one method for the warrant’s author and print its return value')
        .argument('<context>', 'context id, unique prefix, alias or @last', contextRefArg())
        .argument('<method>', 'the method the warrant names')
        .option('--args <json|@file|->', 'the arguments the warrant commits to (default {})'),
    ),
  ).action(
    withCli<DelegationFlags & { args?: string }>(async (cli, [ref, method], flags) => {
      const contextId = await resolveRef(cli, ref as unknown as Ref, 'context', '<context>');
      const r = await cli.client.delegation.performIntent(
        contextId,
        { method, argsJson: await readJsonArg(flags.args, '--args', {}), warrant: await readHexArg(flags.warrant, '--warrant'), authorProof: await readHexArg(flags.authorProof, '--author-proof') },
        { signal: cli.signal },
      );
      cli.out.result(r, () => `${humanValue(r.returns, method)}\nstate hash: ${r.rootHash}`);
    }),
  );
}

export function registerGroupIntentCommands(group: Command): void {
  connectOptions(
    group
      .command('intents')
      .description('what context and governance warrants for this node must name, and whether it may act for members')
      .argument('<group>', GROUP, idArgFor(GROUP))
      .option('--author <account>', 'also whether this account may create contexts here', idArgFor('account id')),
  ).action(
    withCli<ConnectOpts & { author?: string }>(async (cli, [groupId], o) => {
      const [contexts, governance] = await Promise.all([
        cli.client.delegation.contextIntentInfo(groupId, o.author, { signal: cli.signal }),
        cli.client.delegation.governanceIntentInfo(groupId, { signal: cli.signal }),
      ]);
      const r = { contexts, governance };
      cli.out.result(r, () => `context intents:\n${renderRecord({ ...contexts })}\ngovernance intents:\n${renderRecord({ ...governance })}`);
    }),
  );

  connectOptions(
    delegationOptions(
      group
        .command('context-intent')
        .description('create a context for the warrant’s author')
        .argument('<group>', GROUP, idArgFor(GROUP))
        .option('--init-args <json|@file|->', 'the init arguments the warrant commits to (default {})'),
    ),
  ).action(
    withCli<DelegationFlags & { initArgs?: string }>(async (cli, [groupId], flags) => {
      const r = await cli.client.delegation.createContextIntent(
        groupId,
        { warrant: await readHexArg(flags.warrant, '--warrant'), authorProof: await readHexArg(flags.authorProof, '--author-proof'), initArgs: await readJsonArg(flags.initArgs, '--init-args', {}) },
        { signal: cli.signal },
      );
      cli.out.result(r, () => `created context ${r.contextId} in group ${r.groupId}`);
    }),
  );

  connectOptions(
    delegationOptions(
      group
        .command('governance-intent')
        .description('publish a governance op for the warrant’s author')
        .argument('<group>', GROUP, idArgFor(GROUP))
        .requiredOption('--op <hex|@file>', 'the delegable op the warrant commits to (hex)'),
    ),
  ).action(
    withCli<DelegationFlags & { op: string }>(async (cli, [groupId], flags) => {
      const r = await cli.client.delegation.governanceIntent(
        groupId,
        { warrant: await readHexArg(flags.warrant, '--warrant'), authorProof: await readHexArg(flags.authorProof, '--author-proof'), op: await readHexArg(flags.op, '--op') },
        { signal: cli.signal },
      );
      cli.out.result(r, () => `published for the member in group ${r.groupId}`);
    }),
  );
}
