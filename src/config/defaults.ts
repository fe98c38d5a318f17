/**
 * Defaults of the node configuration (reference product.md B1/B3: HTTP 2528, swarm 2428) and of
 * the auth surface (auth spec "Limits"; auth-wire §4.2, §8.1).
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
  /** jsonwebtoken's default leeway, which the reference relies on (auth-wire §4.1) */
  leewaySecs: 60,
  /** failed-login limiter: 5 failures in a sliding 60 s window (auth-wire §8.1) */
  loginFailureLimit: 5,
  loginFailureWindowSecs: 60,
  issuer: 'calimero-auth',
} as const;

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

/** body limit of the HTTP server (auth-wire §1.3: 1 MiB); blob uploads stream and bypass it */
export const BODY_LIMIT_BYTES = 1024 * 1024;
