/**
 * @module client/http-types
 *
 * Options and result types of the HTTP core (`http.ts`).
 */

import type { AuthRevokedError } from './errors.ts';
import type { JsonParseOptions } from '../codec/json.ts';
import type { TokenStore } from './token-store.ts';
import type { HttpResponse } from './http-response.ts';

/** Default per-call deadline. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/**
 * Default deadline of the calls whose answer waits for peers: a join (the node fetches the
 * namespace from a member for up to 20 s) and a group sync (a pending join's retry, then a pull of
 * up to 15 s). Longer than the node's own waits, so the node answers (pending, or the result)
 * before the client gives up on a join that went through.
 */
export const PEER_WAIT_TIMEOUT_MS = 45_000;

export interface HttpClientOptions {
  /** The node's base URL, e.g. `http://localhost:2428` (a path prefix is kept). */
  baseUrl: string | URL;
  /** Where tokens live. Default: a fresh `MemoryTokenStore`. */
  tokenStore?: TokenStore;
  /** Default per-call deadline in ms; 0 or `Infinity` disables it. Default 10 000. */
  timeoutMs?: number;
  /** The `fetch` to use. Default: the global one. */
  fetch?: typeof fetch;
  /** Called once when a terminal auth error cleared the stored tokens. */
  onAuthRevoked?: (error: AuthRevokedError) => void | Promise<void>;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** How integers above 2^53−1 decode (see `json.ts`). Default `'bigint'`. */
  bigint?: JsonParseOptions['bigint'];
}

export type Query = Record<string, string | number | bigint | boolean | null | undefined>;

/** Options every API method accepts. */
export interface CallOptions {
  /** This call's deadline in ms (covers a refresh and the retry). */
  timeoutMs?: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export interface RequestOptions extends CallOptions {
  method?: string;
  query?: Query;
  /** A JSON body, encoded u64-safe (a `bigint` becomes an integer literal). */
  body?: unknown;
  /** A body sent as is (bytes, a stream); ignored when `body` is set. */
  rawBody?: BodyInit;
  /** Bearer token: `true` (default) the stored access token, `false` none, or this token. */
  auth?: boolean | string;
  /** Refresh once on 401 `token_expired`. Default: true when the stored token was sent. */
  refresh?: boolean;
  /** Treat `token_reuse`/`token_revoked` as terminal. Default: true when the stored token was sent. */
  revocation?: boolean;
  /** Bytes of the body sent so far; in a browser the call then goes through XMLHttpRequest (xhr.ts). */
  onUploadProgress?: (loaded: number, total: number | undefined) => void;
}

/** A fully read response (./http-response.ts). */
export type { HttpResponse };
