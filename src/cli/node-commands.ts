/**
 * `hearth init | run | dev` (issue #2): `init` creates a node home, `run` serves it, `dev` does
 * both for a development node. The node's modules load only when a node runs, so the operator
 * commands (which only talk HTTP) start fast.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import { initHome, isInitialised, resolveHome, type HomePaths } from '../config/home.ts';
import { DEFAULT_NODE_NAME } from '../config/defaults.ts';
import type { LogLevel } from '../http/logging.ts';
import { adminCredentials } from '../node/credentials.ts';
import { localNodeOptions, positiveInt } from './connect.ts';
import { MAX_DEV_NODES, runCluster } from './dev-cluster.ts';
import { EXIT_NODE, UsageError } from './exit.ts';

interface CommonOpts {
  home?: string;
  node?: string;
  adminUser?: string;
  adminPassword?: string;
  logLevel?: LogLevel;
  output?: 'human' | 'json';
}

const port = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return n;
};

function print(opts: CommonOpts, human: string, json: Record<string, unknown>): void {
  process.stdout.write(opts.output === 'json' ? `${JSON.stringify(json)}\n` : `${human}\n`);
}

/** The node's modules load only for the commands that run one, so operator commands start fast. */
async function nodeModules() {
  const [{ HearthNode }, { createLogger }] = await Promise.all([import('../node/node.ts'), import('../http/logging.ts')]);
  return { HearthNode, createLogger };
}

async function runNode(paths: HomePaths, opts: CommonOpts & { port?: number; host?: string; swarmPort?: number }): Promise<void> {
  const { HearthNode, createLogger } = await nodeModules();
  const config = await loadConfig(paths.config, opts.node ?? DEFAULT_NODE_NAME);
  if (opts.swarmPort !== undefined) config.swarm.port = opts.swarmPort;
  const logger = createLogger(opts.logLevel ?? ((process.env.HEARTH_LOG as LogLevel) || 'info'));
  // a store that cannot be reopened ends the process, so a service manager restarts it
  const onFatal = (message: string) => {
    process.stderr.write(`hearth: ${message}\n`);
    process.exit(EXIT_NODE);
  };
  const node = new HearthNode({ paths, config, logger, admin: adminCredentials(opts), port: opts.port, host: opts.host, onFatal });
  await node.start();
  print(
    opts,
    [
      `hearth node "${config.node.name}"${config.node.development ? ' (development)' : ''} is running`,
      `  API:        ${node.url}/admin-api`,
      `  login page: ${node.url}/auth/login`,
      `  home:       ${paths.dir}`,
      `  log in with the admin account, e.g. POST ${node.url}/auth/token (see docs/quick-start.md)`,
    ].join('\n'),
    { event: 'listening', url: node.url, home: paths.dir, node: config.node.name, development: config.node.development },
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(EXIT_NODE); // a second signal: stop waiting
    stopping = true;
    logger.info({ signal }, 'stopping');
    await node.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

async function initNode(paths: HomePaths, opts: CommonOpts & InitFlags): Promise<void> {
  const admin = adminCredentials(opts);
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

export function registerNodeCommands(program: Command): void {
  common(program.command('init').description('create a node home: config.toml, signing key, token secret, data directory'))
    .option('--server-port <port>', 'HTTP port', port)
    .option('--swarm-port <port>', 'peer-to-peer port (0 = any free port)', port)
    .option('--swarm-host <host>', 'peer-to-peer bind address (default 0.0.0.0; 127.0.0.1 for --dev)')
    .option('--boot-nodes <multiaddr...>', 'peers to dial at start and keep connected (/ip4/…/tcp/…/p2p/<peer id>)')
    .option('--mdns', 'discover peers on the local network by multicast DNS')
    .option('--server-host <host>', 'HTTP bind address')
    .option('--dev', 'development node: mock tokens enabled')
    .option('--force', 'replace an existing home')
    .action(async (opts: CommonOpts & InitFlags) => initNode(resolveHome(opts), opts));

  common(program.command('run').description('start the node'))
    .option('--port <port>', 'override the configured HTTP port', port)
    .option('--swarm-port <port>', 'override the configured peer-to-peer port', port)
    .option('--host <host>', 'override the configured HTTP bind address')
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent')
    .action(async (opts: CommonOpts & { port?: number; host?: string; swarmPort?: number }) => {
      const paths = resolveHome(opts);
      if (!(await isInitialised(paths))) throw new UsageError(`${paths.dir} is not initialised: run "hearth init" first (or "hearth dev")`);
      await runNode(paths, opts);
    });

  common(program.command('dev').description('initialise a development node if needed, then start it'))
    .option('--port <port>', 'override the configured HTTP port (with --nodes: the first node\'s, default 2528)', port)
    .option('--swarm-port <port>', 'override the configured peer-to-peer port (with --nodes: the first node\'s, default 2428)', port)
    .option('--nodes <n>', `start n connected development nodes, each its own process (1-${MAX_DEV_NODES}; homes <name>-1…)`, positiveInt('nodes'))
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent')
    .action(async (opts: CommonOpts & { port?: number; swarmPort?: number; nodes?: number }) => {
      if (opts.nodes !== undefined) return runCluster({ ...opts, nodes: opts.nodes });
      const paths = resolveHome(opts);
      if (!(await isInitialised(paths))) {
        await initHome(paths, { name: opts.node ?? DEFAULT_NODE_NAME, development: true });
        print(opts, `initialised development node at ${paths.dir}`, { event: 'initialised', home: paths.dir });
      }
      await runNode(paths, opts);
    });
}
