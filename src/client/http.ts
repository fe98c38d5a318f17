/**
 * @module client/http
 *
 * The HTTP core every API module builds on: URL building, JSON encoding and
 * u64-safe decoding (see `json.ts`), the bearer header from the token store, one
 * deadline per call, error mapping, and the session rules of the official SDK
 * (auth-wire §9.3–§9.4):
 *
 * - **Single-flight refresh.** A call answered 401 with `x-auth-error:
 *   token_expired`, sent with the stored access token, awaits one shared
 *   `POST /auth/refresh {access_token, refresh_token}` (see `session.ts`) and is
 *   retried once with the new token. If the refresh fails, the original 401 is
 *   thrown (its `cause` is the refresh failure) and the tokens are kept.
 * - **Terminal revocation.** A 401/403 with `x-auth-error` `token_reuse` or
 *   `token_revoked` clears the store, calls `onAuthRevoked`, and throws
 *   {@link AuthRevokedError}. No retry.
 *
 * Envelope handling is per route: {@link HttpClient.data} unwraps `{data: …}`,
 * {@link HttpClient.json} returns the body as sent (flat routes, whole envelopes).
 */

import type { TokenResponse } from './auth-types.ts';
import {
  AuthRevokedError,
  DecodeError,
  HttpError,
  NetworkError,
  TERMINAL_AUTH_ERRORS,
  TimeoutError,
} from './errors.ts';
import { DEFAULT_TIMEOUT_MS, type HttpClientOptions, type HttpResponse, type Query, type RequestOptions } from './http-types.ts';
import { parseJson, stringifyJson, type JsonParseOptions } from '../codec/json.ts';
import { tokenExpiresAt } from './jwt.ts';
import { Session, errorInit } from './session.ts';
import { untilAborted } from '../abort.ts';
import { callSignal, type CallSignal } from './signal.ts';
import { MemoryTokenStore, type Tokens, type TokenStore } from './token-store.ts';
import { hasXhr, xhrFetch } from './xhr.ts';

export * from './http-types.ts';

type BodyMode = 'text' | 'bytes' | 'stream';
interface Performed {
  response: HttpResponse;
  raw: Response;
  bytes?: Uint8Array;
}

/** How close to expiry a token is renewed before sending a body that cannot be replayed. */
const STREAM_REFRESH_MARGIN_MS = 60_000;

export class HttpClient {
  readonly baseUrl: string;
  readonly tokenStore: TokenStore;
  readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;
  private readonly session: Session;
  private readonly defaultHeaders: Record<string, string>;
  private readonly jsonOptions: JsonParseOptions;

  constructor(options: HttpClientOptions) {
    const base = new URL(String(options.baseUrl));
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new TypeError(`baseUrl must be an http(s) URL, got ${String(options.baseUrl)}`);
    }
    this.baseUrl = base.href.replace(/\/+$/, '');
    this.tokenStore = options.tokenStore ?? new MemoryTokenStore();
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const fetchFn = options.fetch ?? globalThis.fetch?.bind(globalThis);
    if (!fetchFn) throw new TypeError('no fetch implementation available; pass options.fetch');
    this.fetchFn = fetchFn;
    this.session = new Session(this.tokenStore, (tokens) => this.postRefresh(tokens), options.onAuthRevoked);
    this.defaultHeaders = options.headers ?? {};
    this.jsonOptions = { bigint: options.bigint ?? 'bigint' };
  }

  /** Absolute URL for a path (absolute http(s) URLs pass through) plus query. */
  url(path: string, query?: Query): string {
    let url = /^https?:\/\//i.test(path) ? path : `${this.baseUrl}${path.startsWith('/') ? '' : '/'}${path}`;
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) params.append(key, String(value));
    }
    const qs = params.toString();
    if (qs) url += (url.includes('?') ? '&' : '?') + qs;
    return url;
  }

  /** Sends a request; throws {@link HttpError} (or a subclass) for non-2xx answers. */
  async send(path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    return (await this.perform(path, options, 'text', true)).response;
  }

  /** Sends a request and returns the answer whatever its status (no refresh, no revocation). */
  async raw(path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    return (await this.perform(path, options, 'text', false)).response;
  }

  /** `HEAD` request; the status and headers are the answer, non-2xx included. */
  head(path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    return this.raw(path, { ...options, method: 'HEAD' });
  }

  /** The decoded JSON body as sent (no envelope unwrapping); `undefined` for an empty body. */
  async json<T>(path: string, options: RequestOptions = {}): Promise<T> {
    return this.decode(await this.send(path, options)) as T;
  }

  /** Unwraps a `{data: …}` envelope. `nullable` accepts `{data: null}` and an empty body. */
  async data<T>(path: string, options: RequestOptions & { nullable?: boolean } = {}): Promise<T> {
    const response = await this.send(path, options);
    const body = this.decode(response);
    if (options.nullable && (body === undefined || (isObject(body) && body.data == null))) return null as T;
    if (!isObject(body) || !('data' in body)) throw shapeError(response, 'expected a {"data": …} envelope');
    if (body.data === null) throw shapeError(response, `envelope has no data${errorSuffix(body)}`);
    return body.data as T;
  }

  /** Text body (e.g. an HTML page). */
  async text(path: string, options: RequestOptions = {}): Promise<string> {
    return (await this.send(path, options)).bodyText;
  }

  /** Binary body. */
  async bytes(path: string, options: RequestOptions = {}): Promise<Uint8Array> {
    return (await this.perform(path, options, 'bytes', true)).bytes!;
  }

  /**
   * The unread `Response` of a 2xx answer (event streams, large downloads). The
   * deadline covers only the wait for headers; the caller's signal stays linked.
   */
  async stream(path: string, options: RequestOptions = {}): Promise<Response> {
    return (await this.perform(path, options, 'stream', true)).raw;
  }

  /** A TokenResponse whose `data` holds both tokens, else {@link DecodeError}. */
  async tokenResponse(path: string, options: RequestOptions): Promise<TokenResponse> {
    const response = await this.send(path, options);
    const body = this.decode(response);
    const data = isObject(body) ? body.data : undefined;
    if (!isObject(data) || typeof data.access_token !== 'string' || typeof data.refresh_token !== 'string') {
      throw shapeError(response, `expected a token pair in data${isObject(body) ? errorSuffix(body) : ''}`);
    }
    return body as unknown as TokenResponse;
  }

  /** Decodes a response body as JSON (u64-safe); `undefined` when empty. */
  decode(response: HttpResponse): unknown {
    if (response.bodyText.trim() === '') return undefined;
    try {
      return parseJson(response.bodyText, this.jsonOptions);
    } catch (error) {
      throw shapeError(response, 'body is not valid JSON', error);
    }
  }

  getTokens(): Promise<Tokens | null> {
    return this.session.get();
  }

  async setTokens(tokens: Tokens): Promise<void> {
    await this.tokenStore.set(tokens);
  }

  async clearTokens(): Promise<void> {
    await this.tokenStore.clear();
  }

  /** Refreshes the stored pair now (single-flight with automatic refreshes). */
  async refreshTokens(): Promise<Tokens> {
    const tokens = await this.session.refresh();
    if (!tokens) throw new Error('no refresh token stored; log in first');
    return tokens;
  }

  private async postRefresh(tokens: Tokens) {
    const body = await this.tokenResponse('/auth/refresh', {
      method: 'POST',
      body: { access_token: tokens.accessToken, refresh_token: tokens.refreshToken },
      auth: false,
      refresh: false,
      revocation: true,
    });
    return body.data;
  }

  private async perform(path: string, options: RequestOptions, mode: BodyMode, checked: boolean): Promise<Performed> {
    const method = (options.method ?? 'GET').toUpperCase();
    const url = this.url(path, options.query);
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    // upload progress needs XMLHttpRequest in a browser (xhr.ts); answers stream only through fetch
    const fetchFn = options.onUploadProgress && hasXhr() && mode !== 'stream' ? xhrFetch(options.onUploadProgress) : this.fetchFn;
    const call = callSignal(timeoutMs, options.signal);
    const transport = <T>(p: Promise<T>) =>
      p.catch((error: unknown) => {
        throw transportError(error, call, options.signal, method, url, timeoutMs);
      });
    let keepSignal = false;
    try {
      const usesStore = options.auth === undefined || options.auth === true;
      const stored = usesStore ? await this.getTokens() : null;
      let token = typeof options.auth === 'string' ? options.auth : stored?.accessToken;
      const retryable = !(typeof ReadableStream !== 'undefined' && options.rawBody instanceof ReadableStream);
      const refresh = checked && retryable && (options.refresh ?? usesStore);
      const revocation = checked && (options.revocation ?? usesStore);
      // A streamed body cannot be sent twice, so a 401 token_expired could not be retried after a
      // refresh: renew first when the stored token ends within a minute.
      if (checked && !retryable && usesStore && token && stored?.refreshToken && (options.refresh ?? true)) {
        const expiresAt = stored.expiresAt ?? tokenExpiresAt(token);
        if (expiresAt !== undefined && expiresAt - Date.now() < STREAM_REFRESH_MARGIN_MS) {
          const renewed = await untilAborted(this.session.refresh(token), call.signal);
          if (renewed) token = renewed.accessToken;
        }
      }

      for (let attempt = 0; ; attempt++) {
        const raw = await transport(fetchFn(url, this.requestInit(method, options, token, call.signal)));
        if (raw.ok || !checked) {
          const response = toResponse(method, url, raw, '');
          if (mode === 'stream') {
            call.stopTimer();
            keepSignal = true;
            return { response, raw };
          }
          if (mode === 'bytes') return { response, raw, bytes: new Uint8Array(await transport(raw.arrayBuffer())) };
          response.bodyText = await transport(raw.text());
          return { response, raw };
        }
        const error = this.httpError(toResponse(method, url, raw, await transport(raw.text())));
        const isAuthStatus = raw.status === 401 || raw.status === 403;
        if (revocation && isAuthStatus && TERMINAL_AUTH_ERRORS.has(error.authError ?? '')) {
          throw await this.session.revoke(error, token);
        }
        if (refresh && attempt === 0 && token && raw.status === 401 && error.authError === 'token_expired') {
          const renewed = await this.renew(token, call, transport, error);
          if (renewed) {
            token = renewed.accessToken;
            continue;
          }
        }
        throw error;
      }
    } finally {
      if (!keepSignal) call.dispose();
    }
  }

  private async renew(
    used: string,
    call: CallSignal,
    transport: <T>(p: Promise<T>) => Promise<T>,
    original: HttpError,
  ): Promise<Tokens | null> {
    try {
      return await untilAborted(this.session.refresh(used), call.signal);
    } catch (error) {
      if (call.signal.aborted) return transport(Promise.reject(error)); // this call's deadline or abort
      if (error instanceof AuthRevokedError) throw error;
      throw new HttpError({ ...errorInit(original), cause: error });
    }
  }

  private requestInit(method: string, options: RequestOptions, token: string | undefined, signal: AbortSignal) {
    // a plain record with `Headers`' case-insensitive names, not a `Headers`: in Node.js that class
    // is undici's, and loading it costs a short CLI command more than its own work (issue #33)
    const headers: Record<string, string> = {};
    const set = (name: string, value: string) => void (headers[name.toLowerCase()] = value);
    for (const [name, value] of Object.entries(this.defaultHeaders)) set(name, value);
    let body: BodyInit | undefined;
    if (options.body !== undefined) {
      set('content-type', 'application/json');
      body = stringifyJson(options.body);
    } else {
      body = options.rawBody;
    }
    if (token) set('authorization', `Bearer ${token}`);
    for (const [name, value] of Object.entries(options.headers ?? {})) set(name, value);
    const init: RequestInit & { duplex?: 'half' } = { method, headers, body, signal };
    if (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) init.duplex = 'half';
    return init;
  }

  private httpError(response: HttpResponse): HttpError {
    let body: unknown;
    try {
      body = response.bodyText.trim() === '' ? undefined : parseJson(response.bodyText, this.jsonOptions);
    } catch {
      body = undefined;
    }
    return new HttpError({ ...response, body });
  }
}

function toResponse(method: string, url: string, raw: Response, bodyText: string): HttpResponse {
  return { method, url, status: raw.status, statusText: raw.statusText, headers: raw.headers, bodyText };
}

function transportError(
  error: unknown,
  call: CallSignal,
  user: AbortSignal | undefined,
  method: string,
  url: string,
  timeoutMs: number,
): unknown {
  if (error instanceof HttpError || error instanceof DecodeError) return error;
  if (call.timedOut) return new TimeoutError(method, url, timeoutMs);
  if (user?.aborted) return user.reason;
  if (error instanceof TimeoutError || error instanceof NetworkError) return error;
  return new NetworkError(method, url, error);
}

function shapeError(response: HttpResponse, detail: string, cause?: unknown): DecodeError {
  return new DecodeError(response.method, response.url, response.status, response.bodyText, detail, cause);
}

function errorSuffix(body: Record<string, unknown>): string {
  return typeof body.error === 'string' && body.error ? ` (error: ${body.error})` : '';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
