/**
 * `hearth key transfer-owner <username>` (issue #37 item 2; docs/security.md "Who may change a root
 * key"): hands the node to another user. The owner's keys are changed only by the owner, so no
 * HTTP request can move ownership; the operator does it on the node's home, with the node stopped
 * (the store is the node's alone while it runs). The new owner needs an active root key holding
 * `admin`; the change and the previous owner are kept in the owner record and printed.
 */
import type { Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import { DEFAULT_NODE_NAME } from '../config/defaults.ts';
import { isInitialised, resolveHome } from '../config/home.ts';
import { HomeInUseError, runningNode } from '../config/lock.ts';
import { localNodeOptions } from './connect.ts';
import { NodeStartError, UsageError } from './exit.ts';
import { nodeModules, print } from './node-commands.ts';
import type { GlobalOpts } from './options.ts';

interface TransferOpts extends GlobalOpts {
  home?: string;
  node?: string;
}

export function registerOwnerTransfer(key: Command): void {
  localNodeOptions(
    key
      .command('transfer-owner')
      .description("make another user the node's owner (run on the node's home, with the node stopped)")
      .argument('<username>', 'the new owner: a user with an active root key holding admin'),
  ).action(async (username: string, _o: unknown, command: Command) => {
    const opts = command.optsWithGlobals() as TransferOpts;
    const paths = resolveHome(opts);
    if (!(await isInitialised(paths))) throw new UsageError(`${paths.dir} is not initialised: nothing to transfer`);
    const running = await runningNode(paths.dir);
    if (running) throw new HomeInUseError(paths.dir, running);
    const { HearthNode, createLogger } = await nodeModules();
    const config = await loadConfig(paths.config, opts.node ?? DEFAULT_NODE_NAME);
    const node = new HearthNode({ paths, config, logger: createLogger('silent') });
    await node.open().catch((err: unknown) => {
      // a node started without `hearth run` holds the store but no lock file
      if ((err as { cause?: { code?: string } }).cause?.code === 'LEVEL_LOCKED') {
        throw new NodeStartError(`home ${paths.dir} is in use by a running node (its store is locked): stop it first`);
      }
      throw err;
    });
    try {
      await node.keys.adoptOwner(); // a home from before the owner record: who owned it until now
      const out = await node.keys.transferOwner(username);
      const human =
        out.from === out.to ? `${out.to} already owns this node` : `node owner is now ${out.to} (was ${out.from ?? 'nobody'}); start the node again`;
      print(opts, human, { event: 'owner_transferred', from: out.from, to: out.to, at: out.at });
    } finally {
      await node.store.close();
    }
  });
}
