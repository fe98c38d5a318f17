/**
 * The CLI's `fetch` (issue #33: a CLI command < 300 ms): the SDK client of a `hearth` command sends
 * through this instead of Node.js's global `fetch`. Node's `fetch` is undici, which a process loads
 * and sets up on its first call — its modules, its connection pool and its HTTP parser compiled
 * from WebAssembly — for about half of what a short command such as `hearth health` cost in CPU
 * (docs/performance.md "Cold start (issue #33)"); `node:http` is already in Node's snapshot.
 *
 * It answers what the SDK sends a node: `http:` URLs, bodies that are absent, text or bytes. Every
 * other request (`https:`, a streamed or form body, a redirect answer) goes to the global `fetch`,
 * so behaviour there is undici's. What it returns behaves as a `Response` for what the SDK reads:
 * `ok`, `status`, `statusText`, `headers` (get, has, iteration), `text()`, `json()`,
 * `arrayBuffer()` and `body` (a web `ReadableStream`, for event streams and downloads). Failures
 * are fetch's: a `TypeError('fetch failed')` whose `cause` is the socket error, and the signal's
 * reason when the signal aborts (also while the body is being read).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** The request headers undici's `fetch` adds when the caller does not set them. */
const FETCH_DEFAULTS: Record<string, string> = { accept: '*/*', 'accept-language': '*', 'sec-fetch-mode': 'cors', 'user-agent': 'node' };
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The response headers, read as `Headers` reads them (names case-insensitive, repeats joined by ", "). */
class ResponseHeaders {
  private readonly map = new Map<string, string>();
  constructor(raw: readonly string[]) {
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i].toLowerCase();
      const had = this.map.get(name);
      this.map.set(name, had === undefined ? raw[i + 1] : `${had}, ${raw[i + 1]}`);
    }
  }
  get(name: string): string | null {
    return this.map.get(name.toLowerCase()) ?? null;
  }
  has(name: string): boolean {
    return this.map.has(name.toLowerCase());
  }
  forEach(fn: (value: string, name: string, headers: this) => void): void {
    for (const [name, value] of this.entries()) fn(value, name, this);
  }
  *entries(): IterableIterator<[string, string]> {
    yield* [...this.map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }
  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

/** An answer read from `node:http`, shaped as the part of `Response` the SDK uses. */
class NodeResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers: ResponseHeaders;
  readonly redirected = false;
  readonly type = 'basic';
  bodyUsed = false;
  private stream?: ReadableStream<Uint8Array> | null;

  constructor(
    readonly url: string,
    private readonly message: IncomingMessage,
    private readonly content: Readable | null,
  ) {
    this.status = message.statusCode ?? 0;
    this.statusText = message.statusMessage ?? '';
    this.ok = this.status >= 200 && this.status < 300;
    this.headers = new ResponseHeaders(message.rawHeaders);
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (this.stream === undefined) this.stream = this.content ? (Readable.toWeb(this.content) as ReadableStream<Uint8Array>) : null;
    return this.stream;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    if (this.bodyUsed) throw new TypeError('Body is unusable: Body has already been read');
    this.bodyUsed = true;
    if (!this.content) return new Uint8Array(0);
    const chunks: Buffer[] = [];
    for await (const chunk of this.content) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
}

function decoded(message: IncomingMessage): Readable {
  const encoding = (message.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : null;
  if (!decoder) return message;
  message.on('error', (err) => decoder.destroy(err));
  return message.pipe(decoder);
}

/** Header names lower-cased, as `Headers` normalises them; a later value of a name replaces the earlier. */
function requestHeaders(init: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!init) return out;
  const pairs: Iterable<readonly [string, string]> | [string, string][] = Array.isArray(init)
    ? (init as [string, string][])
    : typeof (init as Headers).forEach === 'function' && typeof (init as Headers).get === 'function'
      ? [...(init as Headers)]
      : Object.entries(init as Record<string, string>);
  for (const [name, value] of pairs) out[name.toLowerCase()] = String(value);
  return out;
}

function isSimpleBody(body: unknown): boolean {
  return body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
}

/** `fetch` over `node:http` for what the SDK sends; anything else goes to the global `fetch`. */
export const httpFetch: typeof fetch = (input, init = {}) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : undefined;
  if (url === undefined || !url.startsWith('http:') || !isSimpleBody(init.body) || (init.redirect !== undefined && init.redirect !== 'follow')) {
    return globalThis.fetch(input, init);
  }
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const method = (init.method ?? 'GET').toUpperCase();
  const headers = { ...FETCH_DEFAULTS, ...requestHeaders(init.headers) };
  const body = (init.body as string | Uint8Array | null | undefined) ?? undefined;
  if (body !== undefined) {
    if (typeof body === 'string' && headers['content-type'] === undefined) headers['content-type'] = 'text/plain;charset=UTF-8';
    headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  } else if (method === 'POST' || method === 'PUT') {
    headers['content-length'] = '0';
  }
  return new Promise<Response>((resolve, reject) => {
    const req = httpRequest(url, { method, headers });
    let message: IncomingMessage | undefined;
    // before the answer the request fails with the reason; after it, reading the body does
    const onAbort = () => (message ? message.destroy(signal!.reason) : req.destroy(signal!.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    let answered = false;
    req.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      if (!answered) reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: err }));
    });
    req.on('response', (answer) => {
      answered = true;
      message = answer;
      if (REDIRECTS.has(message.statusCode ?? 0) && message.headers.location) {
        // fetch follows redirects; the node sends none to the SDK, so leave this rare case to fetch
        message.resume();
        signal?.removeEventListener('abort', onAbort);
        resolve(globalThis.fetch(input, init));
        return;
      }
      const empty = method === 'HEAD' || message.statusCode === 204 || message.statusCode === 304;
      if (empty) message.resume();
      const content = empty ? null : decoded(message);
      message.once('close', () => signal?.removeEventListener('abort', onAbort));
      resolve(new NodeResponse(url, message, content) as unknown as Response);
    });
    req.end(body === undefined ? undefined : typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  });
};
