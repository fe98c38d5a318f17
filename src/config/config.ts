/**
 * The node configuration: the typed shape of `config.toml`, its loading (unknown keys ignored,
 * wrong types refused with the key's name) and its atomic saving.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { parse, stringify } from 'smol-toml';
import {
  AUTH_DEFAULTS,
  BLOB_QUOTA_DEFAULTS,
  DEFAULT_REGISTRY_TIMEOUT_SECS,
  DEFAULT_SERVER_HOST,
  DEFAULT_SERVER_PORT,
  DEFAULT_SWARM_HOST,
  DEFAULT_SWARM_PORT,
  RUNTIME_DEFAULTS,
  SERVER_DEFAULTS,
  type BlobQuotaConfig,
} from './defaults.ts';

export interface AuthConfig {
  accessTokenTtlSecs: number;
  refreshTokenTtlSecs: number;
  clientAccessTokenTtlSecs: number;
  clientRefreshTokenTtlSecs: number;
  clientKeyDefaultTtlSecs: number;
  /** a sign-in session's client key (the login page's, marked by `X-Hearth-Session: sign-in`) expires after this long without a refresh */
  signInKeyIdleSecs: number;
  leewaySecs: number;
  loginFailureLimit: number;
  loginFailureWindowSecs: number;
  loginAddressFailureLimit: number;
  loginUserFailureLimit: number;
  loginMaxBackoffSecs: number;
  issuer: string;
  /** origins (scheme://host[:port]) the login page may hand tokens to, besides loopback and itself */
  allowedCallbackOrigins: string[];
  /**
   * hosts (`host` or `host:port`) this node answers to: a token bound to a node URL must name one
   * of them. Empty = compare with the request's Host header, as the reference (docs/security.md)
   */
  nodeHosts: string[];
}

/** The HTTP listener (docs/security.md "Limits"). */
export interface ServerConfig {
  host: string;
  port: number;
  /** browser origins allowed by CORS; empty = this node's own origin and loopback origins; `*` = any */
  corsAllowedOrigins: string[];
  /** read the client address and host from X-Forwarded-* headers (only behind a proxy you run) */
  trustProxy: boolean;
  /** open connections at most; 0 = derived from the descriptor limit */
  maxConnections: number;
  headerTimeoutSecs: number;
  keepAliveTimeoutSecs: number;
  requestTimeoutSecs: number;
  /** connections one client address may hold; 0 = derived from the cap (docs/security.md "Limits") */
  maxConnectionsPerAddress: number;
  /** connections one IPv4 /24 or IPv6 /64 may hold; 0 = derived: half the cap */
  maxConnectionsPerGroup: number;
  /** connections kept for addresses holding few; 0 = derived from the cap */
  reservedConnections: number;
  /** seconds a request body may take after its headers when the request carries no valid token */
  bodyTimeoutSecs: number;
  /** the slowest body rate accepted, beyond `bodyTimeoutSecs`, for a request that passed the guard */
  bodyMinBytesPerSec: number;
  /** one info log line per answered request; false = those lines are at debug (docs/performance.md) */
  accessLog: boolean;
}

/** Where `install-application {package, version}` resolves bundles (docs/applications.md). Empty = unset. */
export interface RegistryConfig {
  /** a local registry directory, as written by `hearth app publish --registry <dir>` */
  dir: string;
  /** an HTTP registry with the reference layout (`/api/v2/bundles/...`, `/artifacts/...`) */
  url: string;
  /** deadline of one registry resolution */
  timeoutSecs: number;
}

export interface NodeConfig {
  node: { name: string; development: boolean };
  server: ServerConfig;
  /** the libp2p listener (docs/network.md): host `0.0.0.0` listens on every interface; port 0 = any free port */
  swarm: { host: string; port: number };
  /** peers dialed at start and redialed with backoff while disconnected: multiaddrs ending in `/p2p/<peer id>` */
  bootstrap: { nodes: string[] };
  /** local discovery: mDNS (off by default, as the reference's `merod init` since core#3620) */
  discovery: { mdns: boolean };
  /**
   * nodes across the internet (docs/network.md "Across the internet"): serve as a relay, reserve
   * on relays, the DHT, AutoNAT and hole punching
   */
  network: NetworkConfig;
  /**
   * specialized nodes (docs/sync.md "Specialized nodes"): `enabled` makes this node answer
   * `invite-specialized-node` discoveries; `admitUnattested` lets this node admit one that brings no
   * verifiable TEE attestation (hearth verifies none), read-only
   */
  specialized: { enabled: boolean; admitUnattested: boolean };
  datastore: { path: string };
  /**
   * the disk blobs may take (docs/security.md "Disk"): a quota (0 = `quota_free_percent` of the free
   * space at start) and the free space blob writes always leave for the store and logs (0 = derived)
   */
  blobs: BlobQuotaConfig;
  auth: AuthConfig;
  registry: RegistryConfig;
  /** dev installs: when `devInstallRoot` is set, `install-dev-application` paths must lie inside it */
  applications: { devInstallRoot: string };
  /**
   * the WebAssembly pool: workers (0 = one per core and one more, at least 3) and calls waiting for
   * one at most; a call's deadline; calls pending per context and in all (count, argument bytes)
   */
  runtime: {
    workers: number;
    queueLimit: number;
    deadlineMs: number;
    contextPendingCalls: number;
    contextPendingBytes: number;
    pendingCalls: number;
    pendingBytes: number;
  };
  /** admin spec "Authentication" rule 3: true makes the delegated-execution routes public (the warrant is the credential) */
  admin: { delegatedAccess: boolean };
  /** TEE attestation provider (docs/tee.md): "none", or the path of a provider module */
  tee: { provider: string };
}

/** `[network]` defaults: a node is no relay, but reserves on relays it meets; DHT, AutoNAT, DCUtR on */
/** `[network]`: the internet half of the swarm (network/libp2p.ts) */
export interface NetworkConfig {
  /** serve as a circuit relay v2 for other nodes */
  relayServer: boolean;
  /** reservations this relay holds at once */
  relayMaxReservations: number;
  /** bytes one relayed connection may carry each way before the relay closes it (0 = no limit) */
  relayDataLimitBytes: number;
  /** how long one relayed connection may last (0 = no limit) */
  relayDurationLimitSecs: number;
  /** reserve a slot on relays this node is connected to (once it finds itself private) and advertise the relayed address */
  relayClient: boolean;
  /** the Kademlia DHT: peer routing by peer id, and blob providers (content routing) */
  dht: boolean;
  /**
   * a DHT client only: this node queries the DHT and announces its blobs, but answers no DHT query
   * and enters no other node's routing table (for nodes that come and go, or should not be found
   * through others' lookups); off by default: every node serves the DHT
   */
  dhtClient: boolean;
  /** reachability: hearth's dial-back probe (network/reachability.ts; the reference calls it AutoNAT) */
  autonat: boolean;
  /** DCUtR: upgrade a relayed connection to a direct one where the NATs allow it */
  holePunching: boolean;
}

export const NETWORK_DEFAULTS: NetworkConfig = {
  relayServer: false,
  relayMaxReservations: 128,
  relayDataLimitBytes: 1 << 30,
  relayDurationLimitSecs: 3_600,
  relayClient: true,
  dht: true,
  dhtClient: false,
  autonat: true,
  holePunching: true,
};

export function defaultConfig(name: string): NodeConfig {
  return {
    node: { name, development: false },
    server: { host: DEFAULT_SERVER_HOST, port: DEFAULT_SERVER_PORT, corsAllowedOrigins: [], trustProxy: false, accessLog: false, ...SERVER_DEFAULTS },
    swarm: { host: DEFAULT_SWARM_HOST, port: DEFAULT_SWARM_PORT },
    bootstrap: { nodes: [] },
    discovery: { mdns: false },
    network: { ...NETWORK_DEFAULTS },
    specialized: { enabled: false, admitUnattested: false },
    datastore: { path: 'data' },
    blobs: { ...BLOB_QUOTA_DEFAULTS },
    auth: { ...AUTH_DEFAULTS, allowedCallbackOrigins: [], nodeHosts: [] },
    registry: { dir: '', url: '', timeoutSecs: DEFAULT_REGISTRY_TIMEOUT_SECS },
    applications: { devInstallRoot: '' },
    runtime: { ...RUNTIME_DEFAULTS },
    admin: { delegatedAccess: false },
    tee: { provider: 'none' },
  };
}

const TOML_NAMES: Record<string, Record<string, string>> = {
  node: { name: 'name', development: 'development' },
  server: {
    host: 'host',
    port: 'port',
    corsAllowedOrigins: 'cors_allowed_origins',
    trustProxy: 'trust_proxy',
    maxConnections: 'max_connections',
    headerTimeoutSecs: 'header_timeout_secs',
    keepAliveTimeoutSecs: 'keep_alive_timeout_secs',
    requestTimeoutSecs: 'request_timeout_secs',
    maxConnectionsPerAddress: 'max_connections_per_address',
    maxConnectionsPerGroup: 'max_connections_per_group',
    reservedConnections: 'reserved_connections',
    bodyTimeoutSecs: 'body_timeout_secs',
    bodyMinBytesPerSec: 'body_min_bytes_per_sec',
    accessLog: 'access_log',
  },
  swarm: { host: 'host', port: 'port' },
  bootstrap: { nodes: 'nodes' },
  discovery: { mdns: 'mdns' },
  network: {
    relayServer: 'relay_server',
    relayMaxReservations: 'relay_max_reservations',
    relayDataLimitBytes: 'relay_data_limit_bytes',
    relayDurationLimitSecs: 'relay_duration_limit_secs',
    relayClient: 'relay_client',
    dht: 'dht',
    dhtClient: 'dht_client',
    autonat: 'autonat',
    holePunching: 'hole_punching',
  },
  specialized: { enabled: 'enabled', admitUnattested: 'admit_unattested' },
  datastore: { path: 'path' },
  blobs: { quotaBytes: 'quota_bytes', quotaFreePercent: 'quota_free_percent', diskReserveBytes: 'disk_reserve_bytes' },
  auth: {
    accessTokenTtlSecs: 'access_token_ttl_secs',
    refreshTokenTtlSecs: 'refresh_token_ttl_secs',
    clientAccessTokenTtlSecs: 'client_access_token_ttl_secs',
    clientRefreshTokenTtlSecs: 'client_refresh_token_ttl_secs',
    clientKeyDefaultTtlSecs: 'client_key_default_ttl_secs',
    signInKeyIdleSecs: 'sign_in_key_idle_secs',
    leewaySecs: 'leeway_secs',
    loginFailureLimit: 'login_failure_limit',
    loginFailureWindowSecs: 'login_failure_window_secs',
    loginAddressFailureLimit: 'login_address_failure_limit',
    loginUserFailureLimit: 'login_user_failure_limit',
    loginMaxBackoffSecs: 'login_max_backoff_secs',
    issuer: 'issuer',
    allowedCallbackOrigins: 'allowed_callback_origins',
    nodeHosts: 'node_hosts',
  },
  registry: { dir: 'dir', url: 'url', timeoutSecs: 'timeout_secs' },
  applications: { devInstallRoot: 'dev_install_root' },
  runtime: {
    workers: 'workers',
    queueLimit: 'queue_limit',
    deadlineMs: 'deadline_ms',
    contextPendingCalls: 'context_pending_calls',
    contextPendingBytes: 'context_pending_bytes',
    pendingCalls: 'pending_calls',
    pendingBytes: 'pending_bytes',
  },
  admin: { delegatedAccess: 'delegated_access' },
  tee: { provider: 'provider' },
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Overlays TOML text on the defaults; a key of the wrong type is an error that names it. */
export function parseConfig(text: string, fallbackName: string): NodeConfig {
  const raw = parse(text) as Record<string, Record<string, unknown>>;
  const cfg = defaultConfig(fallbackName) as unknown as Record<string, Record<string, unknown>>;
  for (const [section, fields] of Object.entries(TOML_NAMES)) {
    const given = raw[section];
    if (given === undefined) continue;
    if (typeof given !== 'object' || Array.isArray(given)) throw new ConfigError(`config: [${section}] must be a table`);
    for (const [prop, tomlKey] of Object.entries(fields)) {
      if (!(tomlKey in given)) continue;
      const want = cfg[section][prop];
      const value = given[tomlKey];
      const ok = Array.isArray(want)
        ? Array.isArray(value) && value.every((v) => typeof v === 'string')
        : typeof value === typeof want || (typeof want === 'number' && typeof value === 'bigint');
      if (!ok) throw new ConfigError(`config: ${section}.${tomlKey} must be ${Array.isArray(want) ? 'a list of strings' : `a ${typeof want}`}`);
      cfg[section][prop] = typeof value === 'bigint' ? Number(value) : value;
    }
  }
  return cfg as unknown as NodeConfig;
}

export function renderConfig(cfg: NodeConfig): string {
  const out: Record<string, Record<string, unknown>> = {};
  const src = cfg as unknown as Record<string, Record<string, unknown>>;
  for (const [section, fields] of Object.entries(TOML_NAMES)) {
    out[section] = {};
    for (const [prop, tomlKey] of Object.entries(fields)) out[section][tomlKey] = src[section][prop];
  }
  return `# hearth node configuration (docs/operator-guide.md)\n${stringify(out)}\n`;
}

/** Reads a config.toml; a syntax error or a value of the wrong type is a ConfigError naming the file, the place and the fix. */
export async function loadConfig(path: string, fallbackName: string): Promise<NodeConfig> {
  const text = await readFile(path, 'utf8');
  try {
    return parseConfig(text, fallbackName);
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(`${path}: ${err.message.replace(/^config: /, '')}; fix the file, or set the key with: hearth config set <key> <value>`);
    const { line, column } = err as { line?: number; column?: number };
    const first = String((err as Error).message).split('\n')[0].replace(/^Invalid TOML document: /, '');
    throw new ConfigError(`${path}${line ? ` line ${line}${column ? `, column ${column}` : ''}` : ''}: not valid TOML (${first}); fix the file`);
  }
}

/** Writes through a temporary file and a rename, so a crash never leaves half a config. */
export async function saveConfig(path: string, cfg: NodeConfig): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, renderConfig(cfg), { mode: 0o600 });
  await rename(tmp, path);
}

/** Every settable key, as `section.toml_key` (what `hearth config get|set` accepts). */
export function configKeys(): string[] {
  return Object.entries(TOML_NAMES).flatMap(([section, fields]) => Object.values(fields).map((k) => `${section}.${k}`));
}

function locate(key: string): { section: string; prop: string } {
  const [section, tomlKey, ...rest] = key.split('.');
  const prop = rest.length === 0 ? Object.entries(TOML_NAMES[section] ?? {}).find(([, k]) => k === tomlKey)?.[0] : undefined;
  if (!prop) throw new ConfigError(`unknown config key "${key}"; known keys: ${configKeys().join(', ')}`);
  return { section, prop };
}

export function getConfigValue(cfg: NodeConfig, key: string): unknown {
  const { section, prop } = locate(key);
  return (cfg as unknown as Record<string, Record<string, unknown>>)[section][prop];
}

/**
 * Sets one key from its text form, typed by the key: integers, `true`/`false`, comma-separated
 * lists (or a JSON array), strings. The result is checked the way a loaded file is.
 */
export function setConfigValue(cfg: NodeConfig, key: string, text: string): NodeConfig {
  const { section, prop } = locate(key);
  const copy = structuredClone(cfg) as unknown as Record<string, Record<string, unknown>>;
  const want = copy[section][prop];
  let value: unknown;
  if (typeof want === 'number') {
    value = Number(text);
    if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(value)) throw new ConfigError(`${key} must be an integer, not "${text}"`);
  } else if (typeof want === 'boolean') {
    if (text !== 'true' && text !== 'false') throw new ConfigError(`${key} must be true or false, not "${text}"`);
    value = text === 'true';
  } else if (Array.isArray(want)) {
    value = text.trim().startsWith('[') ? JSON.parse(text) : text.split(',').map((s) => s.trim()).filter(Boolean);
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new ConfigError(`${key} must be a list of strings`);
  } else {
    value = text;
  }
  copy[section][prop] = value;
  return parseConfig(renderConfig(copy as unknown as NodeConfig), cfg.node.name);
}
