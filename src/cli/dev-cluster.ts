/**
 * `hearth dev --nodes N` (issue #12 §5): N development nodes on this machine, each its own process,
 * on consecutive HTTP and swarm ports from the first ones, listening on loopback and bootstrapped to
 * each other, so they connect and replicate at once. Homes are `<home root>/<name>-1 … -N`; a home
 * is initialised on first use and its bootstrap list rewritten on every start (ports may change).
 * Each node runs `hearth dev` (so a node without credentials generates and keeps its own admin
 * password, as a single `hearth dev` does); the command prints every node's URL and admin once all
 * listen, and Ctrl-C stops them all, waiting for each to exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { loadConfig, saveConfig } from '../config/config.ts';
import { DEFAULT_SERVER_PORT, DEFAULT_SWARM_PORT } from '../config/defaults.ts';
import { initHome, isInitialised, resolveHome, type HomePaths } from '../config/home.ts';
import { publicKeyOf } from '../crypto/keys.ts';
import { EXIT_NODE, UsageError } from './exit.ts';

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
}

interface Member {
  name: string;
  paths: HomePaths;
  port: number;
  swarmPort: number;
  peerId: string;
}

interface Running extends Member {
  child: ChildProcess;
  listening?: Record<string, unknown>;
}

/** Initialises the homes that need it and points each node's bootstrap list at the others. */
export async function prepareCluster(opts: ClusterOptions): Promise<Member[]> {
  if (!Number.isInteger(opts.nodes) || opts.nodes < 1 || opts.nodes > MAX_DEV_NODES) throw new UsageError(`--nodes must be 1 to ${MAX_DEV_NODES}`);
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

function launch(m: Member, opts: ClusterOptions): Running {
  const args = [...process.execArgv, process.argv[1]!, 'dev', '--node', m.name, '--output', 'json'];
  if (opts.home) args.push('--home', opts.home);
  if (opts.logLevel) args.push('--log-level', opts.logLevel);
  const env: NodeJS.ProcessEnv = { ...process.env, HEARTH_LOG: process.env.HEARTH_LOG ?? 'warn' };
  if (opts.adminUser) env.MERO_AUTH_ADMIN_USER = opts.adminUser;
  if (opts.adminPassword) env.MERO_AUTH_ADMIN_PASSWORD = opts.adminPassword;
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return { ...m, child };
}

/** Resolves with the node's `listening` line; rejects when it exits first or misses the deadline. */
function listening(r: Running): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    let errors = '';
    const timer = setTimeout(() => reject(new Error(`${r.name} did not start within ${START_DEADLINE_MS / 1000} s`)), START_DEADLINE_MS);
    r.child.stderr!.on('data', (c: Buffer) => {
      errors += c.toString();
      process.stderr.write(c.toString().replace(/^(?=.)/gm, `[${r.name}] `));
    });
    r.child.stdout!.on('data', (c: Buffer) => {
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
        if (msg?.event === 'listening') {
          clearTimeout(timer);
          resolve(msg);
        } else if (line.trim()) process.stdout.write(`[${r.name}] ${line}\n`);
      }
    });
    r.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${r.name} exited with ${code} before listening${errors.trim() ? `: ${errors.trim().split('\n').pop()}` : ''}`));
    });
  });
}

async function stopAll(running: Running[]): Promise<void> {
  await Promise.all(
    running.map(
      (r) =>
        new Promise<void>((resolve) => {
          if (r.child.exitCode !== null || r.child.signalCode !== null) return resolve();
          const kill = setTimeout(() => r.child.kill('SIGKILL'), STOP_DEADLINE_MS);
          r.child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          r.child.kill('SIGTERM');
        }),
    ),
  );
}

function describe(r: Running): Record<string, unknown> {
  const l = r.listening ?? {};
  return { node: r.name, url: l.url, dashboard: l.dashboard, home: r.paths.dir, swarm: `/ip4/127.0.0.1/tcp/${r.swarmPort}/p2p/${r.peerId}`, admin: l.admin ?? null };
}

function adminLine(admin: unknown, opts: ClusterOptions): string {
  const a = admin as { username?: string; password?: string; passwordFile?: string | null } | null;
  if (a?.password) return `${a.username} / ${a.password} (generated; kept in ${a.passwordFile})`;
  if (a?.passwordFile) return `${a.username} (password in ${a.passwordFile})`;
  if (a?.username) return a.username;
  const user = opts.adminUser ?? process.env.MERO_AUTH_ADMIN_USER;
  return user ? `${user} (password from your environment or flags)` : 'the admin this node already has';
}

/** Runs the cluster until SIGINT/SIGTERM (exit 0) or until a node dies (exit 1). */
export async function runCluster(opts: ClusterOptions): Promise<void> {
  const members = await prepareCluster(opts);
  const running = members.map((m) => launch(m, opts));
  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await stopAll(running);
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  try {
    const lines = await Promise.all(running.map((r) => listening(r)));
    running.forEach((r, i) => (r.listening = lines[i]));
  } catch (err) {
    process.stderr.write(`hearth: ${(err as Error).message}; stopping the others\n`);
    await shutdown(EXIT_NODE);
    return;
  }
  for (const r of running) {
    r.child.once('exit', (code) => {
      if (stopping) return;
      process.stderr.write(`hearth: ${r.name} exited with ${code}; stopping the others\n`);
      void shutdown(EXIT_NODE);
    });
  }
  const nodes = running.map(describe);
  if (opts.output === 'json') {
    process.stdout.write(`${JSON.stringify({ event: 'cluster', nodes })}\n`);
  } else {
    const out = [`${running.length} development nodes are running, connected to each other (Ctrl-C stops them all):`];
    for (const n of nodes) {
      out.push(`  ${n.node}`, `    API:        ${n.url}/admin-api`, `    dashboard:  ${n.dashboard ?? `${n.url}/admin-dashboard/`}`, `    swarm:      ${n.swarm}`, `    admin:      ${adminLine(n.admin, opts)}`);
    }
    process.stdout.write(`${out.join('\n')}\n`);
  }
}
