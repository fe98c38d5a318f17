/**
 * `hearth init | run | dev` (issue #2): `init` creates a node home, `run` serves it, `dev` does
 * both for a development node. The node's modules load only when a node runs, so the operator
 * commands (which only talk HTTP) start fast.
 *
 * `dev` needs no credentials (issue #16): without an admin password from the flags or the
 * environment it generates one, keeps it in `<home>/admin-password` (mode 0600; usable as
 * `MERO_AUTH_ADMIN_PASSWORD_FILE` or `hearth login --password-file`) and prints it. A running node
 * writes `<home>/listening.json` (its address and process), so `--node <name>` finds it on the port
 * it really listens on, `--port` overrides included.
 */
import { dropPrestartedWorker, prestartWorker } from '../runtime/worker-slot.ts';
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import { initHome, isInitialised, resolveHome, type HomePaths } from '../config/home.ts';
import { DEFAULT_NODE_NAME } from '../config/defaults.ts';
import { displayPath, HomeInUseError, HomeLock, runningNode } from '../config/lock.ts';
import type { LogLevel } from '../http/logging.ts';
import { adminCredentials } from '../node/credentials.ts';
import type { AdminCredentials } from '../node/credentials.ts';
import { LISTENING_FILE, localNodeOptions, portArg, positiveInt } from './connect.ts';
import { clusterHolding, MAX_DEV_NODES, runCluster } from './dev-cluster.ts';
import { registerDevControlCommands } from './dev-control.ts';
import { EXIT_NODE, NodeStartError, UsageError } from './exit.ts';
import { chooseLogFormat, humanLogDestination, LOG_FORMATS, type LogFormat } from './log-format.ts';
import type { GlobalOpts } from './options.ts';

interface CommonOpts extends GlobalOpts {
  home?: string;
  node?: string;
  adminUser?: string;
  adminPassword?: string;
  logLevel?: LogLevel;
  logFormat?: LogFormat;
}

/** The file `hearth dev` keeps a generated admin password in. */
export const ADMIN_PASSWORD_FILE = 'admin-password';
/** The admin `hearth dev` creates when no user is named. */
export const DEV_ADMIN_USER = 'dev';

export function print(opts: GlobalOpts, human: string, json: Record<string, unknown>): void {
  process.stdout.write(opts.output === 'json' ? `${JSON.stringify(json)}\n` : `${human}\n`);
}

/** The node's modules load only for the commands that run one, so operator commands start fast. */
export async function nodeModules() {
  const [{ HearthNode }, { createLogger }] = await Promise.all([import('../node/node.ts'), import('../http/logging.ts')]);
  return { HearthNode, createLogger };
}

/** The refusal for a taken swarm port (issue #25 §1), never libp2p's own wording. */
export const swarmPortInUse = (port: number) => new NodeStartError(`swarm port ${port} is in use: pass --swarm-port <port> or 0 for any`);

/**
 * A development node whose swarm port is taken (issue #34 §3: the advice took two tries, first
 * --swarm-port, then --port): the one command that works — `--port` with a free port, with which a
 * development node takes any free swarm port — and the development cluster holding the ports, if one does.
 */
async function devPortsInUse(paths: HomePaths, host: string, port: number, swarmPort: number): Promise<NodeStartError> {
  const httpBusy = !(await portFree(host, port));
  const holder = await clusterHolding(dirname(paths.dir), [port, swarmPort]);
  let free = port;
  while (httpBusy && free < port + 100 && !(await portFree(host, ++free)));
  const what = httpBusy ? `ports ${port} and ${swarmPort} are in use` : `swarm port ${swarmPort} is in use`;
  const by = holder ? ` by the development cluster "${holder}" (hearth dev status${holder === DEFAULT_NODE_NAME ? '' : ` --node ${holder}`})` : '';
  return new NodeStartError(`${what}${by}: start this node with --port ${free} (a development node given --port takes any free swarm port)`);
}

/** Whether nothing listens on `host:port` now (tried by listening on it for an instant). */
export function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code !== 'EADDRINUSE'));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A failure to start, in words: the port is taken or not ours to take, a peer address unusable here. */
function listenFailure(err: unknown, host: string, port: number, swarmPort: number): Error {
  // the network says "network: could not listen on /ip4/…/tcp/<port>: <libp2p's message>"
  if (err instanceof Error && /^network: could not listen on/.test(err.message)) {
    if (/EADDRINUSE|address already in use|NO_FATAL|faultTolerance/i.test(err.message)) return swarmPortInUse(swarmPort);
    return new NodeStartError(`the peer-to-peer network could not listen on port ${swarmPort}: ${err.message.replace(/^network: could not listen on \S+: /, '').split('\n')[0]}`);
  }
  // a configured peer address this node cannot use (a QUIC one on Node.js 20: network/quic.ts)
  if (err instanceof Error && /^network: bootstrap address /.test(err.message)) return new NodeStartError(`[bootstrap] nodes: ${err.message.replace(/^network: bootstrap address /, '')}`);
  const code = (err as NodeJS.ErrnoException).code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') return new NodeStartError(`port ${port} is in use on ${host} (another hearth node?): stop that process, or start this one with --port <n>`);
  if (code === 'EACCES') return new NodeStartError(`no permission to listen on ${where}: use a port above 1023 (--port <n>)`);
  if (code === 'EADDRNOTAVAIL') return new NodeStartError(`${host} is not an address of this machine: pass --host <address>, e.g. 127.0.0.1`);
  return err as Error;
}

interface AdminNote {
  username: string;
  /** the password, when it was generated just now */
  generated?: string;
  file?: string;
}

/** Takes the home's lock; a lock left by a dead process is taken over with a note on stderr. */
export function lockHome(paths: HomePaths): Promise<HomeLock> {
  return HomeLock.acquire(paths.dir, {
    onStale: (previous) =>
      process.stderr.write(
        `hearth: ${displayPath(paths.dir)} was locked by ${previous.pid ? `pid ${previous.pid}, which is no longer running` : 'an unreadable lock file'}; taking the lock over\n`,
      ),
  });
}

async function runNode(paths: HomePaths, opts: CommonOpts & { port?: number; host?: string; swarmPort?: number }, admin: { credentials?: AdminCredentials; note?: AdminNote; onUnused?: () => Promise<void> } = {}): Promise<void> {
  const lock = await lockHome(paths).catch(async (err: unknown) => {
    await admin.onUnused?.();
    throw err;
  });
  try {
    await runLocked(paths, opts, admin, lock);
  } catch (err) {
    await lock.release();
    throw err;
  }
}

async function runLocked(paths: HomePaths, opts: CommonOpts & { port?: number; host?: string; swarmPort?: number }, admin: { credentials?: AdminCredentials; note?: AdminNote; onUnused?: () => Promise<void> }, lock: HomeLock): Promise<void> {
  // the runtime's first worker starts on another core while the node's code loads (worker-slot.ts)
  prestartWorker();
  const { HearthNode, createLogger } = await nodeModules();
  const config = await loadConfig(paths.config, opts.node ?? DEFAULT_NODE_NAME);
  if (opts.swarmPort !== undefined) config.swarm.port = opts.swarmPort;
  // A taken swarm port is said plainly before anything starts. A development node given only
  // --port (the quick start's advice for a taken HTTP port) takes any free swarm port instead.
  if (config.swarm.port !== 0 && !(await portFree(config.swarm.host, config.swarm.port))) {
    if (config.node.development && opts.port !== undefined && opts.swarmPort === undefined) {
      process.stderr.write(`hearth: swarm port ${config.swarm.port} is in use; this development node takes any free one (--swarm-port <port> chooses)\n`);
      config.swarm.port = 0;
    } else {
      await admin.onUnused?.();
      throw config.node.development && opts.swarmPort === undefined ? await devPortsInUse(paths, config.server.host, opts.port ?? config.server.port, config.swarm.port) : swarmPortInUse(config.swarm.port);
    }
  }
  const format = chooseLogFormat(opts.logFormat, process.stdout.isTTY);
  const level = opts.logLevel ?? ((process.env.HEARTH_LOG as LogLevel) || 'info');
  const logger = format === 'human' ? createLogger(level, humanLogDestination(process.stdout, { colour: process.stdout.isTTY })) : createLogger(level);
  // a store that cannot be reopened ends the process, so a service manager restarts it
  const onFatal = (message: string) => {
    process.stderr.write(`hearth: ${message}\n`);
    process.exit(EXIT_NODE);
  };
  const node = new HearthNode({ paths, config, logger, admin: admin.credentials ?? adminCredentials(opts), port: opts.port, host: opts.host, onFatal });
  const host = opts.host ?? config.server.host;
  const port = opts.port ?? config.server.port;
  try {
    await node.start();
  } catch (err) {
    await admin.onUnused?.();
    throw listenFailure(err, host, port, config.swarm.port);
  } finally {
    // a node whose start prepared no context's module took no worker: none runs until a call needs one
    dropPrestartedWorker();
  }
  if (!node.provisionedAdmin) await admin.onUnused?.();
  const listening = join(paths.dir, LISTENING_FILE);
  await writeFile(listening, `${JSON.stringify({ url: node.url, pid: process.pid })}\n`, { mode: 0o600 });
  await lock.setUrl(node.url);
  const note = admin.note && (node.provisionedAdmin || admin.note.file) ? admin.note : undefined;
  const shownAdmin = note
    ? node.provisionedAdmin && note.generated
      ? `${note.username}, password ${note.generated} (generated; kept in ${note.file}, mode 0600)`
      : `${note.username}${note.file ? ` (password in ${note.file})` : ''}`
    : undefined;
  print(
    opts,
    [
      `hearth node "${config.node.name}"${config.node.development ? ' (development)' : ''} is running`,
      `  dashboard:  ${node.url}/admin-dashboard/`,
      `  API:        ${node.url}/admin-api`,
      `  home:       ${paths.dir}`,
      ...(shownAdmin ? [`  admin:      ${shownAdmin}`] : []),
      `  sign in on the dashboard, or: hearth login --username <admin> (see docs/quick-start.md)`,
    ].join('\n'),
    {
      event: 'listening',
      url: node.url,
      dashboard: `${node.url}/admin-dashboard/`,
      home: paths.dir,
      node: config.node.name,
      development: config.node.development,
      ...(note ? { admin: { username: note.username, passwordFile: note.file ?? null, ...(node.provisionedAdmin && note.generated ? { password: note.generated } : {}) } } : {}),
    },
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(EXIT_NODE); // a second signal: stop waiting
    stopping = true;
    logger.info({ signal }, 'stopping');
    await rm(listening, { force: true });
    await node.stop();
    await lock.release();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

/**
 * The admin of a development node: the one the flags or environment name, else `dev` with the
 * password kept in the home (generated the first time). The file is written before the node
 * starts, so a password the node accepted is never lost, and removed again when the node already
 * had an admin and did not take it.
 */
async function devAdmin(paths: HomePaths, opts: CommonOpts) {
  const env = process.env;
  const set = (v: string | undefined) => (v === '' ? undefined : v);
  const username = opts.adminUser ?? set(env.MERO_AUTH_ADMIN_USER) ?? DEV_ADMIN_USER;
  if (opts.adminPassword !== undefined || set(env.MERO_AUTH_ADMIN_PASSWORD) || set(env.MERO_AUTH_ADMIN_PASSWORD_FILE)) {
    const credentials = adminCredentials({ ...opts, adminUser: username })!;
    return { credentials, note: { username } };
  }
  const file = join(paths.dir, ADMIN_PASSWORD_FILE);
  const kept = await readFile(file, 'utf8').then((t) => t.replace(/\r?\n$/, ''), () => undefined);
  if (kept) return { credentials: { username, password: kept }, note: { username, file } };
  const password = randomBytes(18).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return {
    credentials: { username, password },
    note: { username, generated: password, file },
    onUnused: () => rm(file, { force: true }),
  };
}

async function initNode(paths: HomePaths, opts: CommonOpts & InitFlags): Promise<void> {
  const admin = adminCredentials(opts);
  if (opts.bootNodes?.length) {
    // loaded here only: the address checks bring the multiaddr parser, which other commands never need
    const { checkPeerAddresses } = await import('../network/quic.ts');
    try {
      checkPeerAddresses(opts.bootNodes);
    } catch (err) {
      throw new UsageError(`--boot-nodes: ${(err as Error).message}`);
    }
  }
  // --force replaces the home: never under a running node
  const running = await runningNode(paths.dir);
  if (running) throw new HomeInUseError(paths.dir, running);
  await initHome(paths, {
    name: opts.node ?? DEFAULT_NODE_NAME,
    serverPort: opts.serverPort,
    swarmPort: opts.swarmPort,
    swarmHost: opts.swarmHost,
    bootstrap: opts.bootNodes,
    mdns: opts.mdns,
    serverHost: opts.serverHost,
    development: opts.dev,
    force: opts.force,
  });
  if (admin) {
    const { HearthNode, createLogger } = await nodeModules();
    const config = await loadConfig(paths.config, opts.node ?? DEFAULT_NODE_NAME);
    const node = new HearthNode({ paths, config, logger: createLogger('silent') });
    await node.open();
    try {
      await node.keys.provisionAdmin(admin.username, admin.password);
    } finally {
      await node.store.close();
    }
  }
  print(opts, `initialised ${paths.dir}${admin ? ` with admin "${admin.username}"` : ''}\nstart it with: hearth run${opts.home ? ` --home ${opts.home}` : ''}${opts.node ? ` --node ${opts.node}` : ''}`, {
    event: 'initialised',
    home: paths.dir,
    admin: admin?.username ?? null,
  });
}

interface InitFlags {
  serverPort?: number;
  swarmPort?: number;
  swarmHost?: string;
  bootNodes?: string[];
  mdns?: boolean;
  serverHost?: string;
  dev?: boolean;
  force?: boolean;
}

function common(cmd: Command): Command {
  return localNodeOptions(cmd)
    .option('--admin-user <user>', 'admin account to create when the node has none (or MERO_AUTH_ADMIN_USER)')
    .option('--admin-password <password>', 'its password, 8-128 characters (prefer MERO_AUTH_ADMIN_PASSWORD)');
}

function logFormatArg(value: string): LogFormat {
  if (!(LOG_FORMATS as readonly string[]).includes(value)) throw new InvalidArgumentError(`must be one of ${LOG_FORMATS.join(', ')}`);
  return value as LogFormat;
}

/** The command's options with the global ones. */
const optsOf = <T>(command: Command) => command.optsWithGlobals() as T;

export function registerNodeCommands(program: Command): void {
  common(program.command('init').description('create a node home: config.toml, signing key, token secret, data directory'))
    .option('--server-port <port>', 'HTTP port', portArg)
    .option('--swarm-port <port>', 'peer-to-peer port (0 = any free port)', portArg)
    .option('--swarm-host <host>', 'peer-to-peer bind address (default 0.0.0.0; 127.0.0.1 for --dev)')
    .option('--boot-nodes <multiaddr...>', 'peers to dial at start and keep connected (/ip4/…/tcp/…/p2p/<peer id>; /ip4/…/udp/…/quic-v1/p2p/<peer id> on Node.js 22+)')
    .option('--mdns', 'discover peers on the local network by multicast DNS')
    .option('--server-host <host>', 'HTTP bind address')
    .option('--dev', 'development node: mock tokens enabled')
    .option('--force', 'replace an existing home')
    .action(async (_o: unknown, command: Command) => {
      const opts = optsOf<CommonOpts & InitFlags>(command);
      return initNode(resolveHome(opts), opts);
    });

  common(program.command('run').description('start the node'))
    .option('--port <port>', 'override the configured HTTP port', portArg)
    .option('--swarm-port <port>', 'override the configured peer-to-peer port', portArg)
    .option('--host <host>', 'override the configured HTTP bind address')
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent')
    .option('--log-format <format>', 'human (the default on a terminal) or json (the default otherwise)', logFormatArg)
    .action(async (_o: unknown, command: Command) => {
      const opts = optsOf<CommonOpts & { port?: number; host?: string; swarmPort?: number }>(command);
      const paths = resolveHome(opts);
      if (!(await isInitialised(paths))) throw new UsageError(`${paths.dir} is not initialised: run "hearth init" first (or "hearth dev")`);
      await runNode(paths, opts);
    });

  const dev = common(program.command('dev').description('initialise a development node if needed, then start it (generates an admin password when none is given)'))
    .option('--port <port>', "override the configured HTTP port (with --nodes: the first node's, default 2528)", portArg)
    .option('--swarm-port <port>', "override the configured peer-to-peer port (with --nodes: the first node's, default 2428)", portArg)
    .option('--nodes <n>', `start n connected development nodes, each its own process (1-${MAX_DEV_NODES}; homes <name>-1…)`, positiveInt('nodes'))
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent')
    .option('--log-format <format>', 'human (the default on a terminal) or json (the default otherwise)', logFormatArg)
    .action(async (_o: unknown, command: Command) => {
      const opts = optsOf<CommonOpts & { port?: number; swarmPort?: number; nodes?: number }>(command);
      if (opts.nodes !== undefined) return runCluster({ ...opts, nodes: opts.nodes });
      const paths = resolveHome(opts);
      if (!(await isInitialised(paths))) {
        await initHome(paths, { name: opts.node ?? DEFAULT_NODE_NAME, development: true });
        print(opts, `initialised development node at ${paths.dir}`, { event: 'initialised', home: paths.dir });
      }
      await runNode(paths, opts, await devAdmin(paths, opts));
    });
  registerDevControlCommands(dev);
}
