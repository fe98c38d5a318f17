/**
 * Test nodes: a real hearth node in a temporary home, listening on 127.0.0.1 with a free port,
 * driven over HTTP. `startTestNode` runs it in-process (fast); `spawnNode` runs the CLI in a child
 * process (for signals, kill -9 and the command line itself).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, MemoryTokenStore, type Client } from '../../src/client/index.ts';
import type { Clock } from '../../src/clock.ts';
import { loadConfig, saveConfig, type NodeConfig } from '../../src/config/config.ts';
import { initHome, resolveHome, type HomePaths } from '../../src/config/home.ts';
import { createLogger } from '../../src/http/logging.ts';
import { HearthNode } from '../../src/node/node.ts';
import type { NetworkFactory } from '../../src/network/index.ts';
import { publicKeyOf } from '../../src/crypto/keys.ts';
import type { MemoryHub } from '../../src/network/memory.ts';

export const ADMIN_USER = 'dev';
export const ADMIN_PASSWORD = 'dev-password';
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/**
 * The `hearth` command as users run it: the compiled distribution (`bin/hearth.js` → `dist/app/`),
 * built by the test run's global setup when the sources changed. In-process nodes (`startTestNode`)
 * run the TypeScript sources; spawned ones run what ships.
 */
export const HEARTH_BIN = join(ROOT, 'bin/hearth.js');

export interface TestNodeOptions {
  dev?: boolean;
  clock?: Clock;
  configure?: (cfg: NodeConfig) => void;
  /** reuse an existing home (restart tests) */
  paths?: HomePaths;
  port?: number;
  /** the node's network (e.g. `memoryNetwork(hub)`); absent: libp2p on 127.0.0.1 with no peers configured; `null`: standalone */
  network?: NetworkFactory | null;
}

/** In-process nodes on one MemoryHub: each joins the hub on start and leaves it on stop (unlinked). */
export function memoryNetwork(hub: MemoryHub): NetworkFactory {
  return ({ key }) => {
    const self = publicKeyOf(key);
    const net = hub.node(self) ?? hub.join(self);
    return Object.assign(net, {
      start: async () => undefined,
      stop: async () => hub.leave(self),
    });
  };
}

export interface TestNode {
  url: string;
  paths: HomePaths;
  node: HearthNode;
  adminUser: string;
  adminPassword: string;
  stop(): Promise<void>;
  /** stops and starts a new node on the same home and port */
  restart(): Promise<TestNode>;
  /** stops the node and deletes its home */
  destroy(): Promise<void>;
}

export async function makeHome(opts: { dev?: boolean; configure?: (cfg: NodeConfig) => void } = {}): Promise<HomePaths> {
  const paths = resolveHome({ home: await mkdtemp(join(tmpdir(), 'hearth-test-')), node: 'test' });
  await initHome(paths, { name: 'test', development: opts.dev ?? false, serverPort: 0, swarmPort: 0, swarmHost: '127.0.0.1' });
  if (opts.configure) {
    const cfg = await loadConfig(paths.config, 'test');
    opts.configure(cfg);
    await saveConfig(paths.config, cfg);
  }
  return paths;
}

export async function startTestNode(opts: TestNodeOptions = {}): Promise<TestNode> {
  const paths = opts.paths ?? (await makeHome(opts));
  const config = await loadConfig(paths.config, 'test');
  const node = new HearthNode({
    paths,
    config,
    logger: createLogger((process.env.HEARTH_TEST_LOG as never) || 'silent'),
    clock: opts.clock,
    admin: { username: ADMIN_USER, password: ADMIN_PASSWORD },
    host: '127.0.0.1',
    port: opts.port ?? 0,
    network: opts.network,
  });
  await node.start();
  const url = node.url;
  const self: TestNode = {
    url,
    paths,
    node,
    adminUser: ADMIN_USER,
    adminPassword: ADMIN_PASSWORD,
    stop: () => node.stop(),
    restart: async () => {
      await node.stop();
      return startTestNode({ ...opts, paths, port: Number(new URL(url).port) });
    },
    destroy: async () => {
      await node.stop();
      await rm(join(paths.dir, '..'), { recursive: true, force: true });
    },
  };
  return self;
}

export interface SpawnedNode {
  child: ChildProcess;
  url: string;
  output(): string;
  /** resolves with the exit code */
  exited: Promise<number | null>;
}

/**
 * Runs `hearth <args>` (the compiled command); resolves once the node prints its JSON "listening" line.
 * `wrap` runs it under another command (e.g. `['prlimit', '--nofile=600']`); `nodeBinary` is the
 * Node.js that runs it (default the test run's own; another line: helpers/node-lines.ts). Test
 * nodes never take the default swarm port (several run at once): `--swarm-port 0` unless the args
 * name one.
 */
export function spawnNode(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 30_000, wrap: string[] = [], nodeBinary = process.execPath): Promise<SpawnedNode> {
  const swarm = args.includes('--swarm-port') ? [] : ['--swarm-port', '0'];
  const argv = [nodeBinary, HEARTH_BIN, ...args, ...swarm, '--output', 'json'];
  const [command, ...rest] = [...wrap, ...argv];
  const child = spawn(command, rest, {
    cwd: ROOT,
    env: { ...process.env, HEARTH_LOG: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start in time:\n${out}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const msg = JSON.parse(line);
          if (msg.event === 'listening') {
            clearTimeout(timer);
            resolve({ child, url: msg.url, output: () => out, exited });
          }
        } catch {
          /* a partial line: wait for more */
        }
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`node exited with ${code} before listening:\n${out}`));
    });
  });
}

/** Runs `hearth <args>` to completion (`opts.nodeBinary`: the Node.js that runs it, as spawnNode). */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  opts: { input?: string; nodeBinary?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(opts.nodeBinary ?? process.execPath, [HEARTH_BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** An SDK client of `node`, logged in as its admin (tokens in memory): after `restart()`, make a new one. */
export async function adminClient(node: Pick<TestNode, 'url' | 'adminUser' | 'adminPassword'>): Promise<Client> {
  const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await client.auth.login({ username: node.adminUser, password: node.adminPassword });
  return client;
}
