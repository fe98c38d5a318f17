/**
 * `hearth health | identity | peers` (issue #6): what a node says about itself. `health` needs no
 * login (the probes are public) and exits 1 when the node is not alive or not ready, so scripts
 * and orchestrators can use it as a check.
 */
import type { Command } from 'commander';
import { HttpError, statusOf } from '../client/index.ts';
import { connectOptions, withCli } from './connect.ts';

export function registerStatusCommands(program: Command): void {
  connectOptions(program.command('health').description('is the node alive and ready? (no login needed; exit 1 if not)')).action(
    withCli(async (cli) => {
      const probe = async (fn: () => Promise<unknown>) => {
        try {
          return statusOf(await fn()) ?? 'unknown';
        } catch (err) {
          if (err instanceof HttpError && statusOf(err)) return statusOf(err)!;
          throw err;
        }
      };
      const health = await probe(() => cli.client.admin.health({ signal: cli.signal }));
      const ready = await probe(() => cli.client.admin.ready({ signal: cli.signal }));
      const ok = health === 'alive' && ready === 'ready';
      cli.out.result({ node: cli.nodeUrl, health, ready, ok }, () => `${cli.nodeUrl}: health ${health}, ${ready}`);
      if (!ok) process.exitCode = 1;
    }),
  );

  connectOptions(program.command('identity').description("the node's account, device and keys, and its auth service")).action(
    withCli(async (cli) => {
      const [node, service] = await Promise.all([
        cli.client.accounts.identity({ signal: cli.signal }),
        cli.client.auth.identity({ signal: cli.signal }),
      ]);
      cli.out.result({ ...node, service }, () =>
        [
          `account:      ${node.accountId}`,
          `device:       ${node.deviceId ?? '-'}`,
          `public key:   ${node.publicKey}`,
          `account root: ${node.holdsAccountRoot ? 'held by this node' : 'held elsewhere'}`,
          `service:      ${service.service} ${service.version} (${service.authentication_mode}; providers: ${service.providers.join(', ')})`,
        ].join('\n'),
      );
    }),
  );

  connectOptions(program.command('peers').description('how many peers the node is connected to')).action(
    withCli(async (cli) => {
      const { count } = await cli.client.admin.peers({ signal: cli.signal });
      cli.out.result({ count }, () => `${count} connected peer${count === 1 ? '' : 's'}`);
    }),
  );
}
