/**
 * `hearth dev --nodes N` (issue #12 §5, issue #25 §2): N development nodes on this machine, each its
 * own supervised process, on consecutive HTTP and swarm ports from the first ones, listening on
 * loopback and bootstrapped to each other, so they connect and replicate at once. Homes are
 * `<home root>/<name>-1 … -N`; a home is initialised on first use and its bootstrap list rewritten on
 * every start (ports may change). Each node runs `hearth dev` (so a node without credentials
 * generates and keeps its own admin password, as a single `hearth dev` does).
 *
 * The supervisor keeps the others running when one node exits (and says so), and serves a small
 * control endpoint on loopback — its URL and a random token are in the cluster's state file
 * `<home root>/<name>.cluster.json` (0600), removed when the cluster stops — through which
 * `hearth dev stop | start | restart <node>` and `hearth dev status` (dev-control.ts) act on it. A
 * second `hearth dev --nodes` on the same homes finds the state file of a live supervisor and says
 * where the cluster runs. Ctrl-C stops every node, waiting for each to exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createPrivateKey, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig, saveConfig } from '../config/config.ts';
import { DEFAULT_SERVER_PORT, DEFAULT_SWARM_PORT } from '../config/defaults.ts';
import { initHome, isInitialised, resolveHome, type HomePaths } from '../config/home.ts';
import { publicKeyOf } from '../crypto/keys.ts';
import { HomeInUseError, processAlive, runningNode } from '../config/lock.ts';
import { EXIT_NODE, NodeStartError, UsageError } from './exit.ts';
import { formatLogLine } from './log-format.ts';

export const MAX_DEV_NODES = 16;
/** how long a node may take to listen, and to exit after SIGTERM, before the cluster gives up on it */
const START_DEADLINE_MS = 60_000;
const STOP_DEADLINE_MS = 15_000;

export interface ClusterOptions {
  nodes: number;
  home?: string;
  /** name prefix (default `dev`) */
  node?: string;
  port?: number;
  swarmPort?: number;
  adminUser?: string;
  adminPassword?: string;
  logLevel?: string;
  output?: string;
  /** more nodes than `--nodes` allows (the scale runs of test/helpers/scale.ts; never from the CLI) */
  maxNodes?: number;
}

export interface Member {
  name: string;
  paths: HomePaths;
  port: number;
  swarmPort: number;
  peerId: string;
}


/** Initialises the homes that need it and points each node's bootstrap list at the others. */
export async function prepareCluster(opts: ClusterOptions): Promise<Member[]> {
  if (!Number.isInteger(opts.nodes) || opts.nodes < 1 || opts.nodes > (opts.maxNodes ?? MAX_DEV_NODES)) throw new UsageError(`--nodes must be 1 to ${opts.maxNodes ?? MAX_DEV_NODES}`);
  const port = opts.port ?? DEFAULT_SERVER_PORT;
  const swarmPort = opts.swarmPort ?? DEFAULT_SWARM_PORT;
  if (port === 0 || swarmPort === 0) throw new UsageError('--nodes needs fixed first ports: --port and --swarm-port must not be 0');
  if (port + opts.nodes - 1 > 65535 || swarmPort + opts.nodes - 1 > 65535) throw new UsageError('the nodes would need ports above 65535');
  const { libp2pPeerIdOf } = await import('../network/peer-id.ts');
  const members: Member[] = [];
  for (let i = 1; i <= opts.nodes; i++) {
    const name = `${opts.node ?? 'dev'}-${i}`;
    const paths = resolveHome({ home: opts.home, node: name });
    const m = { name, paths, port: port + i - 1, swarmPort: swarmPort + i - 1 };
    if (!(await isInitialised(paths))) await initHome(paths, { name, development: true, serverPort: m.port, swarmPort: m.swarmPort, swarmHost: '127.0.0.1' });
    const key = createPrivateKey(await readFile(paths.nodeKey));
    members.push({ ...m, peerId: libp2pPeerIdOf(publicKeyOf(key)) });
  }
  for (const m of members) {
    const cfg = await loadConfig(m.paths.config, m.name);
    cfg.server.port = m.port;
    cfg.swarm.port = m.swarmPort;
    cfg.swarm.host = '127.0.0.1';
    cfg.bootstrap.nodes = members.filter((o) => o !== m).map((o) => `/ip4/127.0.0.1/tcp/${o.swarmPort}/p2p/${o.peerId}`);
    await saveConfig(m.paths.config, cfg);
  }
  return members;
}

/** The cluster's state file: where its supervisor's control endpoint is. */
export interface ClusterState {
  pid: number;
  control: string;
  token: string;
  nodes: { name: string; home: string; port: number; swarmPort: number }[];
}

export const clusterStateFile = (root: string, prefix: string) => join(root, `${prefix}.cluster.json`);

/** The state of a live cluster on these homes, if its supervisor runs. */
export async function liveCluster(root: string, prefix: string): Promise<ClusterState | undefined> {
  try {
    const state = JSON.parse(await readFile(clusterStateFile(root, prefix), 'utf8')) as ClusterState;
    return typeof state.pid === 'number' && state.pid !== process.pid && processAlive(state.pid) ? state : undefined;
  } catch {
    return undefined;
  }
}

/** The name of a live development cluster under `root` one of whose nodes holds one of `ports`. */
export async function clusterHolding(root: string, ports: number[]): Promise<string | undefined> {
  const names = (await readdir(root).catch(() => [] as string[])).filter((f) => f.endsWith('.cluster.json'));
  for (const file of names) {
    const prefix = file.slice(0, -'.cluster.json'.length);
    const state = await liveCluster(root, prefix);
    if (state?.nodes.some((n) => ports.includes(n.port) || ports.includes(n.swarmPort))) return prefix;
  }
  return undefined;
}

type NodeState = 'starting' | 'running' | 'stopping' | 'stopped' | 'exited';

export interface Supervised extends Member {
  child?: ChildProcess;
  state: NodeState;
  exitCode?: number | null;
  listening?: Record<string, unknown>;
}

export function launch(m: Supervised, opts: ClusterOptions): void {
  const args = [...process.execArgv, process.argv[1]!, 'dev', '--node', m.name, '--output', 'json', '--log-format', 'json'];
  if (opts.home) args.push('--home', opts.home);
  if (opts.logLevel) args.push('--log-level', opts.logLevel);
  const env: NodeJS.ProcessEnv = { ...process.env, HEARTH_LOG: process.env.HEARTH_LOG ?? 'warn' };
  if (opts.adminUser) env.MERO_AUTH_ADMIN_USER = opts.adminUser;
  if (opts.adminPassword) env.MERO_AUTH_ADMIN_PASSWORD = opts.adminPassword;
  m.child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  m.state = 'starting';
  m.exitCode = undefined;
}

/** A node's log line for the supervisor's output: human on a terminal (log-format.ts), as sent otherwise. */
function relay(name: string, line: string, human: boolean): string {
  return `[${name}] ${human ? formatLogLine(line) : line}\n`;
}

/**
 * Resolves with the node's `listening` line; rejects when it exits first or misses the deadline.
 * The node's other output lines are relayed to `sink` (stdout by default), prefixed with its name.
 */
export function listening(r: Supervised, human: boolean, sink: NodeJS.WritableStream = process.stdout): Promise<Record<string, unknown>> {
  const child = r.child!;
  return new Promise((resolve, reject) => {
    let buffered = '';
    let errors = '';
    let started = false;
    const timer = setTimeout(() => reject(new Error(`${r.name} did not start within ${START_DEADLINE_MS / 1000} s`)), START_DEADLINE_MS);
    child.stderr!.on('data', (c: Buffer) => {
      errors += c.toString();
      process.stderr.write(c.toString().replace(/^(?=.)/gm, `[${r.name}] `));
    });
    child.stdout!.on('data', (c: Buffer) => {
      buffered += c.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        let msg: Record<string, unknown> | undefined;
        try {
          msg = line.startsWith('{') ? (JSON.parse(line) as Record<string, unknown>) : undefined;
        } catch {
          msg = undefined;
        }
        if (msg?.event === 'listening' && !started) {
          started = true;
          clearTimeout(timer);
          resolve(msg);
        } else if (line.trim()) sink.write(relay(r.name, line, human));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!started) reject(new Error(`${r.name} exited with ${code} before listening${errors.trim() ? `: ${errors.trim().split('\n').pop()!.replace(/^hearth: /, '')}` : ''}`));
    });
  });
}

/** Sends SIGTERM and waits for the exit (SIGKILL after the deadline). */
export function stopOne(r: Supervised): Promise<void> {
  return new Promise<void>((resolve) => {
    const child = r.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    r.state = 'stopping';
    const kill = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function describe(r: Supervised): Record<string, unknown> {
  const l = r.listening ?? {};
  return {
    node: r.name,
    state: r.state,
    pid: r.state === 'running' || r.state === 'starting' ? (r.child?.pid ?? null) : null,
    url: l.url ?? `http://127.0.0.1:${r.port}`,
    dashboard: l.dashboard ?? `http://127.0.0.1:${r.port}/admin-dashboard/`,
    home: r.paths.dir,
    swarm: `/ip4/127.0.0.1/tcp/${r.swarmPort}/p2p/${r.peerId}`,
    admin: l.admin ?? null,
    ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}),
  };
}

function adminLine(admin: unknown, opts: ClusterOptions): string {
  const a = admin as { username?: string; password?: string; passwordFile?: string | null } | null;
  if (a?.password) return `${a.username} / ${a.password} (generated; kept in ${a.passwordFile})`;
  if (a?.passwordFile) return `${a.username} (password in ${a.passwordFile})`;
  if (a?.username) return a.username;
  const user = opts.adminUser ?? process.env.MERO_AUTH_ADMIN_USER;
  return user ? `${user} (password from your environment or flags)` : 'the admin this node already has';
}

/** The supervisor's control endpoint: loopback only, every request must carry the state file's token. */
function serveControl(token: string, act: (name: string, verb: string) => Promise<unknown>, list: () => unknown): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const given = Buffer.from(String(req.headers['x-hearth-cluster-token'] ?? ''));
    const want = Buffer.from(token);
    if (given.length !== want.length || !timingSafeEqual(given, want)) return send(403, { error: 'not this cluster\'s token' });
    const url = new URL(req.url ?? '/', 'http://control');
    if (req.method === 'GET' && url.pathname === '/nodes') return send(200, list());
    const m = /^\/nodes\/([^/]+)\/(stop|start|restart)$/.exec(url.pathname);
    if (req.method !== 'POST' || !m) return send(404, { error: 'no such control route' });
    act(decodeURIComponent(m[1]!), m[2]!).then(
      (body) => send(200, body),
      (err: Error & { status?: number }) => send(err.status ?? 409, { error: err.message }),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const addr = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${addr.port}`, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

const refusal = (status: number, message: string) => Object.assign(new Error(message), { status });

/** Runs the cluster until SIGINT/SIGTERM (exit 0); a node that exits leaves the others running. */
export async function runCluster(opts: ClusterOptions): Promise<void> {
  const root = resolve(opts.home ?? process.env.HEARTH_HOME ?? join(homedir(), '.hearth'));
  const prefix = opts.node ?? 'dev';
  const live = await liveCluster(root, prefix);
  if (live) {
    const where = live.nodes.map((n) => `${n.name} http://127.0.0.1:${n.port}`).join(', ');
    throw new NodeStartError(`the development cluster "${prefix}" is already running (pid ${live.pid}: ${where}); see it with: hearth dev status${opts.home ? ` --home ${opts.home}` : ''}, stop it with Ctrl-C in its terminal`);
  }
  const members = await prepareCluster(opts);
  // a node started on its own in one of these homes
  for (const m of members) {
    const held = await runningNode(m.paths.dir);
    if (held) throw new HomeInUseError(m.paths.dir, held);
  }
  const human = opts.output !== 'json' && process.stdout.isTTY === true;
  const nodes: Supervised[] = members.map((m) => ({ ...m, state: 'stopped' }));
  let stopping = false;
  const token = randomBytes(24).toString('base64url');
  const stateFile = clusterStateFile(root, prefix);

  /** Watches a started node: says when it exits while the cluster runs. */
  const supervise = (r: Supervised) => {
    const child = r.child!;
    child.once('exit', (code, signal) => {
      if (r.child !== child) return;
      const wanted = r.state === 'stopping';
      r.state = wanted ? 'stopped' : 'exited';
      r.exitCode = code;
      if (stopping || wanted) return;
      const how = code !== null ? `with code ${code}` : `on ${signal}`;
      const running = nodes.filter((n) => n.state === 'running').length;
      const note = `${r.name} exited ${how}; the other ${running} node${running === 1 ? '' : 's'} keep running (bring it back with: hearth dev start ${r.name}${opts.home ? ` --home ${opts.home}` : ''})`;
      process.stderr.write(opts.output === 'json' ? `${JSON.stringify({ event: 'exited', node: r.name, code, signal })}\n` : `hearth: ${note}\n`);
    });
  };
  const start = async (r: Supervised) => {
    launch(r, opts);
    supervise(r);
    r.listening = await listening(r, human);
    r.state = 'running';
  };

  const control = await serveControl(
    token,
    async (name, verb) => {
      const r = nodes.find((n) => n.name === name);
      if (!r) throw refusal(404, `no node ${name} in this cluster (it has ${nodes.map((n) => n.name).join(', ')})`);
      if (stopping) throw refusal(409, 'the cluster is stopping');
      if (verb === 'stop' || verb === 'restart') {
        if (verb === 'stop' && r.state !== 'running' && r.state !== 'starting') throw refusal(409, `${name} is not running (${r.state})`);
        await stopOne(r);
        r.state = 'stopped';
      }
      if (verb === 'start' || verb === 'restart') {
        if (r.state === 'running' || r.state === 'starting') throw refusal(409, `${name} is already ${r.state}`);
        await start(r);
      }
      const line = `${name} ${verb === 'stop' ? 'stopped' : verb === 'start' ? 'started' : 'restarted'}`;
      process.stderr.write(opts.output === 'json' ? `${JSON.stringify({ event: verb, node: name })}\n` : `hearth: ${line}\n`);
      return describe(r);
    },
    () => nodes.map(describe),
  );
  const state: ClusterState = { pid: process.pid, control: control.url, token, nodes: nodes.map((n) => ({ name: n.name, home: n.paths.dir, port: n.port, swarmPort: n.swarmPort })) };
  await writeFile(stateFile, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  const forget = () => {
    try {
      if ((JSON.parse(readFileSync(stateFile, 'utf8')) as ClusterState).pid === process.pid) rmSync(stateFile, { force: true });
    } catch {
      /* gone */
    }
  };
  process.once('exit', forget);

  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await Promise.all(nodes.map(stopOne));
    await control.close();
    forget();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  try {
    await Promise.all(nodes.map(start));
  } catch (err) {
    process.stderr.write(`hearth: ${(err as Error).message}; stopping the others\n`);
    await shutdown(EXIT_NODE);
    return;
  }
  const shown = nodes.map(describe);
  if (opts.output === 'json') {
    process.stdout.write(`${JSON.stringify({ event: 'cluster', nodes: shown, control: control.url, state: stateFile })}\n`);
  } else {
    const out = [`${nodes.length} development nodes are running, connected to each other (Ctrl-C stops them all):`];
    for (const n of shown) {
      out.push(`  ${n.node}`, `    API:        ${n.url}/admin-api`, `    dashboard:  ${n.dashboard}`, `    swarm:      ${n.swarm}`, `    admin:      ${adminLine(n.admin, opts)}`);
    }
    out.push(`  one node: hearth dev stop|start|restart <node>; all of them: hearth dev status`);
    process.stdout.write(`${out.join('\n')}\n`);
  }
}
