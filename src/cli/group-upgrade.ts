/**
 * `hearth group signing-key` (issue #15) over `POST /groups/{g}/signing-key` (docs/governance.md
 * "Group signing keys"). The secret is read from a file or stdin, never from the command line,
 * where it would reach the process list and shell history.
 */
import type { Command } from 'commander';
import { connectOptions, withCli, type ConnectOpts } from './connect.ts';
import { idArg } from './group-args.ts';
import { readSecretFrom } from './prompt.ts';
import { UsageError } from './exit.ts';

const GROUP = 'group id';

export function registerGroupSurfaceCommands(group: Command): void {
  connectOptions(
    group
      .command('signing-key')
      .description("give the node a signing key of its own account for a group (its secret, from a file or stdin)")
      .argument('<group>', GROUP, idArg(GROUP))
      .option('--key-file <file>', 'the Ed25519 secret key, 64 hex, in a file')
      .option('--key-stdin', 'read the secret key from stdin'),
  ).action(
    withCli<ConnectOpts & { keyFile?: string; keyStdin?: boolean }>(async (cli, [groupId], o) => {
      if (!o.keyFile && !o.keyStdin) throw new UsageError('pass the secret key with --key-file <file> or --key-stdin');
      const signingKey = (await readSecretFrom({ label: 'signing key', file: o.keyFile, stdin: o.keyStdin })).trim();
      const r = await cli.client.groups.registerSigningKey(groupId, { signingKey }, { signal: cli.signal });
      cli.out.result({ groupId, ...r }, () => `registered signing key ${r.publicKey} for group ${groupId}`);
    }),
  );
}
