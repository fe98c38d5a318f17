/**
 * The node listens before its network starts (issue #33; src/node/domain.ts `startAfterListen`):
 * while the network loads and starts, liveness answers 200 and readiness `starting`; the node is
 * ready once the network has started; a network that fails to start fails the node's start and
 * closes its HTTP server. (That libp2p takes up at its start the topics and protocols the domains
 * registered before: test/e2e/network, whose spawned nodes all start their network that way.)
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/http/logging.ts';
import { MemoryHub } from '../../src/network/memory.ts';
import type { NetworkFactory } from '../../src/network/index.ts';
import { HearthNode } from '../../src/node/node.ts';
import { ADMIN_PASSWORD, ADMIN_USER, makeHome, memoryNetwork } from '../helpers/node.ts';

/** A memory network whose start waits for `release` (or fails with `fail`). */
function gatedNetwork(hub: MemoryHub) {
  let release!: () => void;
  let fail!: (err: Error) => void;
  const gate = new Promise<void>((resolve, reject) => ((release = resolve), (fail = reject)));
  const seen = { startCalled: false };
  const factory: NetworkFactory = (ctx) => {
    const net = memoryNetwork(hub)(ctx);
    const start = net.start.bind(net);
    return Object.assign(net, {
      start: async () => {
        seen.startCalled = true;
        await gate;
        await start();
      },
    });
  };
  return { factory, release: () => release(), fail: (err: Error) => fail(err), seen };
}

async function nodeWith(network: NetworkFactory) {
  const paths = await makeHome();
  const node = new HearthNode({
    paths,
    config: await loadConfig(paths.config, 'test'),
    logger: createLogger('silent'),
    admin: { username: ADMIN_USER, password: ADMIN_PASSWORD },
    host: '127.0.0.1',
    port: 0,
    network,
  });
  return { node, cleanup: () => rm(join(paths.dir, '..'), { recursive: true, force: true }) };
}

/** The node's URL once it listens (its start still going on). */
async function listening(node: HearthNode): Promise<string> {
  for (let i = 0; i < 1_000; i++) {
    try {
      return node.url;
    } catch {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  throw new Error('the node never listened');
}

const status = async (url: string) => {
  const res = await fetch(url);
  return { code: res.status, body: (await res.json()) as { data?: { status?: string } } };
};

describe('a node listens before its network starts', () => {
  it('answers liveness 200 and readiness `starting` until the network has started, then ready', async () => {
    const hub = new MemoryHub();
    const gated = gatedNetwork(hub);
    const { node, cleanup } = await nodeWith(gated.factory);
    const started = node.start();
    try {
      const url = await listening(node);
      await expect.poll(() => gated.seen.startCalled).toBe(true);
      expect(await status(`${url}/admin-api/health`)).toEqual({ code: 200, body: { data: { status: 'alive' } } });
      expect(await status(`${url}/admin-api/ready`)).toEqual({ code: 503, body: { data: { status: 'starting' } } });
      expect(node.lifecycle).toBe('starting');
      gated.release();
      await started;
      expect(await status(`${url}/admin-api/ready`)).toEqual({ code: 200, body: { data: { status: 'ready' } } });
    } finally {
      await started.catch(() => undefined);
      await node.stop();
      await cleanup();
    }
  });

  it('fails its start when the network does not start, and stops listening', async () => {
    const gated = gatedNetwork(new MemoryHub());
    const { node, cleanup } = await nodeWith(gated.factory);
    const started = node.start();
    try {
      const url = await listening(node);
      await expect.poll(() => gated.seen.startCalled).toBe(true);
      gated.fail(new Error('swarm port taken'));
      await expect(started).rejects.toThrow('swarm port taken');
      await expect(fetch(`${url}/admin-api/health`)).rejects.toThrow();
    } finally {
      await cleanup();
    }
  });
});
