/**
 * Clusters of real node processes on 127.0.0.1 for the multi-node end-to-end tests: homes made as
 * `hearth dev --nodes N` makes them (src/cli/dev-cluster.ts: consecutive ports, bootstrapped to
 * each other), each node its own `hearth dev` process that a test can stop, kill -9 and start again
 * on the same home and ports. Ports are taken below the ephemeral range, where nothing else binds.
 */
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, MemoryTokenStore, type Client } from '../../src/client/index.ts';
import { prepareCluster } from '../../src/cli/dev-cluster.ts';
import { loadConfig, saveConfig } from '../../src/config/config.ts';
import { makeBundle } from './bundles.ts';
import { ADMIN_PASSWORD, ADMIN_USER, spawnNode, type SpawnedNode } from './node.ts';
import { buildTestApp } from './wasm-apps.ts';

const ENV = { MERO_AUTH_ADMIN_USER: ADMIN_USER, MERO_AUTH_ADMIN_PASSWORD: ADMIN_PASSWORD, HEARTH_LOG: process.env.LAB_LOG ?? 'warn' };

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A first port with `n` free consecutive ports for HTTP and for the swarm (1000 above it). */
export async function freePortRun(n: number): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 9_000);
    const ports = Array.from({ length: n }, (_, i) => [base + i, base + 1000 + i]).flat();
    if ((await Promise.all(ports.map(free))).every(Boolean)) return base;
  }
  throw new Error('no free port run found');
}

export class ClusterNode {
  process?: SpawnedNode;
  client!: Client;

  constructor(
    readonly name: string,
    private readonly root: string,
    /** the swarm port its home is configured with (kept across restarts: peers redial it) */
    readonly swarmPort: number,
    /** a command the node runs under (e.g. `ip netns exec <namespace>`) */
    private readonly wrap: string[] = [],
    /** the SDK's deadline per call (its default is 10 s; many nodes on two cores answer slower) */
    private readonly callTimeoutMs?: number,
    /** how long the process may take to answer after its spawn (default 60 s) */
    private readonly startTimeoutMs = 60_000,
    /** the Node.js that runs it (default the test run's own; another line: helpers/node-lines.ts) */
    private readonly nodeBinary = process.execPath,
  ) {}

  get url(): string {
    if (!this.process) throw new Error(`${this.name} is not running`);
    return this.process.url;
  }

  async start(): Promise<void> {
    this.process = await spawnNode(['dev', '--home', this.root, '--node', this.name, '--swarm-port', String(this.swarmPort)], ENV, this.startTimeoutMs, this.wrap, this.nodeBinary);
    this.client = createClient({ baseUrl: this.process.url, tokenStore: new MemoryTokenStore(), ...(this.callTimeoutMs ? { timeoutMs: this.callTimeoutMs } : {}) });
    await this.client.auth.login({ username: ADMIN_USER, password: ADMIN_PASSWORD });
  }

  /** SIGTERM, waiting for the exit. */
  async stop(): Promise<void> {
    if (!this.process) return;
    const p = this.process;
    this.process = undefined;
    p.child.kill('SIGTERM');
    await p.exited;
  }

  /** kill -9, waiting for the exit. */
  async kill(): Promise<void> {
    if (!this.process) return;
    const p = this.process;
    this.process = undefined;
    p.child.kill('SIGKILL');
    await p.exited;
  }
}

export interface Cluster {
  nodes: ClusterNode[];
  destroy(): Promise<void>;
}

/**
 * Initialises `n` bootstrapped homes and starts every node. `star`: the first node is the hub; the
 * others bootstrap from it alone (and it from nobody), so they reach each other only through it.
 * `callTimeoutMs`: the SDK's deadline per call; `startConcurrency`: nodes spawned at once (all by
 * default); `startTimeoutMs`: how long each may take to start (default 60 s).
 */
export async function startCluster(n: number, opts: { star?: boolean; callTimeoutMs?: number; startConcurrency?: number; startTimeoutMs?: number } = {}): Promise<Cluster> {
  const root = await mkdtemp(join(tmpdir(), 'hearth-cluster-'));
  const base = await freePortRun(n);
  const members = await prepareCluster({ nodes: n, home: root, node: 'n', port: base, swarmPort: base + 1000, maxNodes: Math.max(n, 16) });
  if (opts.star) {
    const hub = `/ip4/127.0.0.1/tcp/${members[0]!.swarmPort}/p2p/${members[0]!.peerId}`;
    for (const [i, m] of members.entries()) {
      const cfg = await loadConfig(m.paths.config, m.name);
      cfg.bootstrap.nodes = i === 0 ? [] : [hub];
      // no DHT: its routing-table refresh would introduce the spokes to each other
      cfg.network.dht = false;
      await saveConfig(m.paths.config, cfg);
    }
  }
  const nodes = members.map((m) => new ClusterNode(m.name, root, m.swarmPort, [], opts.callTimeoutMs, opts.startTimeoutMs));
  try {
    await inBatches(nodes, opts.startConcurrency ?? n, (x) => x.start());
  } catch (err) {
    await Promise.all(nodes.map((x) => x.stop()));
    await rm(root, { recursive: true, force: true });
    throw err;
  }
  return {
    nodes,
    destroy: async () => {
      await Promise.all(nodes.map((x) => x.stop()));
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Runs `f` on every item, at most `limit` at once. */
export async function inBatches<T>(items: T[], limit: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
      for (let i = next++; i < items.length; i = next++) await f(items[i]!);
    }),
  );
}

/** Polls `ok` until it holds (every 100 ms), failing after `timeoutMs` with `what`. */
export async function eventually(what: string, ok: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await ok()) return;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * `joiner` joins namespace `ns` on an invitation from `inviter`, syncs it at once (the join's answer
 * means stored, or pending with the sync completing it: docs/governance.md "Acknowledged joins"),
 * then joins context `ctx` once its governance lists it (within `listTimeoutMs`).
 */
export async function joinContext(inviter: ClusterNode, joiner: ClusterNode, ns: string, ctx: string, listTimeoutMs = 20_000): Promise<void> {
  const { invitation } = await inviter.client.invitations.inviteToNamespace(ns);
  await joiner.client.invitations.joinNamespace(ns, invitation);
  await joiner.client.groups.sync(ns);
  await eventually(`${joiner.name} lists the context`, async () => (await joiner.client.groups.contexts(ns)).some((x) => x.contextId === ctx), listTimeoutMs);
  await joiner.client.contexts.join(ctx);
}

/**
 * The kv test app, packaged as `pkg`, installed on each of `nodes`, and a namespace and a context
 * of it created on `owner` (the others still have to join): how most multi-node tests begin.
 */
export async function kvContextOn(nodes: ClusterNode[], owner: ClusterNode, pkg: string): Promise<{ appId: string; ns: string; ctx: string }> {
  const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: pkg });
  let appId = '';
  for (const n of nodes) appId = (await n.client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
  const ns = (await owner.client.namespaces.create({ applicationId: appId })).namespaceId;
  const ctx = (await owner.client.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
  return { appId, ns, ctx };
}
