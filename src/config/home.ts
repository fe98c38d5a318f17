/**
 * The node home (`~/.hearth/<node>/`, or `--home DIR`): its layout, and `init`, which creates it
 * with the node's Ed25519 signing key, the token-signing secret and the data directory.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { defaultConfig, saveConfig, type NodeConfig } from './config.ts';
import { DEFAULT_NODE_NAME } from './defaults.ts';

export interface HomePaths {
  dir: string;
  config: string;
  nodeKey: string;
  tokenSecret: string;
  data: string;
  blobs: string;
}

/** `--home` wins; then `HEARTH_HOME`; then `~/.hearth`. The node's own folder is `<root>/<node>`. */
export function resolveHome(opts: { home?: string; node?: string }): HomePaths {
  const root = opts.home ?? process.env.HEARTH_HOME ?? join(homedir(), '.hearth');
  const dir = resolve(root, opts.node ?? DEFAULT_NODE_NAME);
  return {
    dir,
    config: join(dir, 'config.toml'),
    nodeKey: join(dir, 'node-key.pem'),
    tokenSecret: join(dir, 'token-secret'),
    data: join(dir, 'data'),
    blobs: join(dir, 'blobs'),
  };
}

export async function isInitialised(paths: HomePaths): Promise<boolean> {
  try {
    await stat(paths.config);
    return true;
  } catch {
    return false;
  }
}

export class HomeExistsError extends Error {
  override name = 'HomeExistsError';
}

export interface InitOptions {
  name: string;
  serverPort?: number;
  swarmPort?: number;
  swarmHost?: string;
  /** bootstrap multiaddrs */
  bootstrap?: string[];
  mdns?: boolean;
  serverHost?: string;
  development?: boolean;
  force?: boolean;
}

export async function initHome(paths: HomePaths, opts: InitOptions): Promise<NodeConfig> {
  if (await isInitialised(paths)) {
    if (!opts.force) throw new HomeExistsError(`${paths.dir} is already initialised; pass --force to start over`);
    await rm(paths.dir, { recursive: true, force: true });
  }
  await mkdir(paths.data, { recursive: true, mode: 0o700 });
  const cfg = defaultConfig(opts.name);
  cfg.node.development = opts.development ?? false;
  if (opts.serverPort !== undefined) cfg.server.port = opts.serverPort;
  if (opts.serverHost !== undefined) cfg.server.host = opts.serverHost;
  if (opts.swarmPort !== undefined) cfg.swarm.port = opts.swarmPort;
  if (opts.swarmHost !== undefined) cfg.swarm.host = opts.swarmHost;
  else if (cfg.node.development) cfg.swarm.host = '127.0.0.1'; // a development node talks to peers on this machine only
  if (opts.bootstrap !== undefined) cfg.bootstrap.nodes = opts.bootstrap;
  if (opts.mdns !== undefined) cfg.discovery.mdns = opts.mdns;
  const { privateKey } = generateKeyPairSync('ed25519');
  await writeFile(paths.nodeKey, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  // the reference's HS256 secret: 32 random bytes, base64url (auth-wire §4.1)
  await writeFile(paths.tokenSecret, randomBytes(32).toString('base64url'), { mode: 0o600 });
  // config last: its presence is what marks the home as initialised
  await saveConfig(paths.config, cfg);
  return cfg;
}

export async function readSecret(path: string): Promise<string> {
  return (await readFile(path, 'utf8')).trim();
}
