/**
 * Defaults of the node configuration (reference product.md B1/B3: HTTP 2528, swarm 2428) and of
 * the auth surface (auth spec "Limits"; auth-wire §4.2, §8.1). The configuration owns its defaults:
 * the domains that apply a setting (contexts, runtime, blobs, applications) take its default from
 * here, so this module imports nothing of them (issue #35).
 */

export const DEFAULT_SERVER_PORT = 2528;
export const DEFAULT_SWARM_PORT = 2428;
/** the reference listens on every interface (product.md: `--swarm-host` default `0.0.0.0,::`); development nodes use loopback */
export const DEFAULT_SWARM_HOST = '0.0.0.0';
export const DEFAULT_SERVER_HOST = '127.0.0.1';
export const DEFAULT_NODE_NAME = 'default';

export const AUTH_DEFAULTS = {
  /** root-key tokens (auth-wire §4.2) */
  accessTokenTtlSecs: 3600,
  refreshTokenTtlSecs: 30 * 24 * 3600,
  /** client-key tokens (auth spec Limits, rc.83) */
  clientAccessTokenTtlSecs: 15 * 60,
  clientRefreshTokenTtlSecs: 7 * 24 * 3600,
  /** client key lifetime when `ttl_secs` is absent (auth spec Limits) */
  clientKeyDefaultTtlSecs: 30 * 24 * 3600,
  /** a sign-in session's client key unused this long expires: as long as its refresh token lives (docs/decisions.md) */
  signInKeyIdleSecs: 7 * 24 * 3600,
  /** jsonwebtoken's default leeway, which the reference relies on (auth-wire §4.1) */
  leewaySecs: 60,
  /**
   * failed-login limiter (auth-wire §8.1, docs/security.md): 5 failures per (username, address) in a
   * sliding 60 s window, 20 per address, 100 per username from addresses that never logged in as it;
   * each lock of a bucket doubles its lock time up to 15 min
   */
  loginFailureLimit: 5,
  loginFailureWindowSecs: 60,
  loginAddressFailureLimit: 20,
  loginUserFailureLimit: 100,
  loginMaxBackoffSecs: 900,
  issuer: 'calimero-auth',
} as const;

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

/** body limit of the HTTP server (auth-wire §1.3: 1 MiB); blob uploads stream and bypass it */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Connection limits of the HTTP server (issue #17 finding 1; docs/security.md "Limits"). 0 for
 * `maxConnections` means: derived from the process's file-descriptor limit, leaving room for the
 * store, the blob files and the runtime (`FD_RESERVE`).
 */
export const SERVER_DEFAULTS = {
  maxConnections: 0,
  headerTimeoutSecs: 10,
  keepAliveTimeoutSecs: 5,
  requestTimeoutSecs: 600,
  /** connections one client address may hold; 0 = derived: a quarter of the cap, at least 16 (issue #23) */
  maxConnectionsPerAddress: 0,
  /** connections one address group (IPv4 /24, IPv6 /64) may hold; 0 = derived: half the cap (issue #37 item 4) */
  maxConnectionsPerGroup: 0,
  /** slots kept for addresses holding few connections; 0 = derived: an eighth of the cap */
  reservedConnections: 0,
  /** a request body must be complete this long after its headers (a request without a token: all it gets) */
  bodyTimeoutSecs: 10,
  /** a request that passed the guard gets `bodyTimeoutSecs` plus its size at this rate */
  bodyMinBytesPerSec: 16 * 1024,
} as const;

/** Descriptors kept back from connections for LevelDB (its own cap), blob chunks, workers and logs. */
export const FD_RESERVE = 512;
/** The connection cap when the descriptor limit cannot be read (or is unlimited). */
export const FALLBACK_MAX_CONNECTIONS = 1024;

/** Wall-clock budget of one method call (the runtime ends the guest when it passes); config `runtime.deadline_ms`. */
export const CALL_DEADLINE_MS = 5_000;
/** calls waiting for a worker at most (issue #17 finding 8); config `runtime.queue_limit` */
export const DEFAULT_QUEUE_LIMIT = 256;

const MiB = 1024 * 1024;
/** config `[runtime] context_pending_calls`, `context_pending_bytes`, `pending_calls`, `pending_bytes` (src/contexts/admission.ts) */
export const DEFAULT_ADMISSION = Object.freeze({
  contextCalls: 64,
  contextBytes: 32 * MiB,
  totalCalls: 1024,
  totalBytes: 128 * MiB,
});

/** config `[blobs]` (src/blobs/quota.ts). */
export interface BlobQuotaConfig {
  /** bytes the blob store may hold; 0 = derived from the free space at start */
  quotaBytes: number;
  /** the derived quota: this percentage of the free space left after the reserve */
  quotaFreePercent: number;
  /** free bytes a blob write always leaves on the filesystem; 0 = derived from its size */
  diskReserveBytes: number;
}

export const BLOB_QUOTA_DEFAULTS: BlobQuotaConfig = { quotaBytes: 0, quotaFreePercent: 50, diskReserveBytes: 0 };

/** Default deadline of one registry fetch (manifest + bundle download); config `registry.timeout_secs`. */
export const DEFAULT_REGISTRY_TIMEOUT_SECS = 120;

/** The WebAssembly pool (issue #17 finding 8): 0 workers = one per core and one more (at least 3; issue #14). */
export const RUNTIME_DEFAULTS = {
  workers: 0,
  queueLimit: DEFAULT_QUEUE_LIMIT,
  /** a method call's wall-clock budget, its wait for a worker included */
  deadlineMs: CALL_DEADLINE_MS,
  /** calls pending (waiting for the context's lock or a worker, or running) per context and in all, by count and argument bytes (issue #23 §4) */
  contextPendingCalls: DEFAULT_ADMISSION.contextCalls,
  contextPendingBytes: DEFAULT_ADMISSION.contextBytes,
  pendingCalls: DEFAULT_ADMISSION.totalCalls,
  pendingBytes: DEFAULT_ADMISSION.totalBytes,
} as const;
