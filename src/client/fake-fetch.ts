/**
 * @module client/fake-fetch
 *
 * Test helper (not exported from the package): a scripted `fetch` that records
 * every request and answers from route handlers, so client tests run without a
 * server.
 */

export interface RecordedRequest {
  method: string;
  url: string;
  path: string;
  headers: Headers;
  bodyText: string;
  /** The JSON body, when there is one. */
  body: unknown;
  signal: AbortSignal | null;
}

export type Handler = (req: RecordedRequest) => Response | Promise<Response>;

export interface FakeFetch {
  fetch: typeof fetch;
  requests: RecordedRequest[];
  /** Requests whose `METHOD /path` equals `key`. */
  calls(key: string): RecordedRequest[];
  /** Adds or replaces the handler for `METHOD /path` (path without query). */
  on(key: string, handler: Handler): void;
}

export function fakeFetch(routes: Record<string, Handler> = {}): FakeFetch {
  const handlers = new Map(Object.entries(routes));
  const requests: RecordedRequest[] = [];
  const fetchImpl = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const url = String(input);
    const method = (init.method ?? 'GET').toUpperCase();
    const bodyText = typeof init.body === 'string' ? init.body : '';
    let body: unknown;
    try {
      body = bodyText ? JSON.parse(bodyText) : undefined;
    } catch {
      body = undefined;
    }
    const path = new URL(url).pathname;
    const req: RecordedRequest = {
      method,
      url,
      path,
      headers: new Headers(init.headers),
      bodyText,
      body,
      signal: init.signal ?? null,
    };
    requests.push(req);
    if (init.signal?.aborted) throw init.signal.reason;
    const handler = handlers.get(`${method} ${path}`);
    if (!handler) return new Response(null, { status: 404, statusText: 'Not Found' });
    return handler(req);
  };
  return {
    fetch: fetchImpl as typeof fetch,
    requests,
    calls: (key) => requests.filter((r) => `${r.method} ${r.path}` === key),
    on: (key, handler) => void handlers.set(key, handler),
  };
}

/** A JSON response. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** An empty-bodied response (guard rejections), e.g. `empty(401, {'x-auth-error': 'token_expired'})`. */
export function empty(status: number, headers: Record<string, string> = {}): Response {
  return new Response(null, { status, headers });
}

/** A fetch that never answers until its signal aborts (for timeout tests). */
export function hangingFetch(): typeof fetch {
  return ((_input: RequestInfo | URL, init: RequestInit = {}) =>
    new Promise<Response>((_resolve, reject) => {
      const signal = init.signal;
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    })) as typeof fetch;
}

/** A JWT-shaped token (unsigned) carrying `claims`. */
export function fakeJwt(claims: Record<string, unknown>): string {
  const b64 = (value: unknown) => {
    const bytes = new TextEncoder().encode(JSON.stringify(value));
    const binary = Array.from(bytes, (b) => String.fromCharCode(b)).join('');
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };
  return `${b64({ typ: 'JWT', alg: 'HS256' })}.${b64(claims)}.signature`;
}
