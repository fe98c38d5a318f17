/**
 * Raw SSE readers for end-to-end tests that assert wire bytes (ids, retry, frame order) rather
 * than what the SDK makes of them.
 */
import http from 'node:http';
import { Readable } from 'node:stream';
import { SseParser, type SseMessage } from '../../src/client/events.ts';

export interface RawFrame {
  id?: string;
  data: Record<string, any>;
}

export class RawStream {
  readonly frames: RawFrame[] = [];
  text = '';
  ended = false;
  private waiters: (() => void)[] = [];
  readonly response: Response;
  private readonly ctrl: AbortController;

  private constructor(response: Response, ctrl: AbortController) {
    this.response = response;
    this.ctrl = ctrl;
    void this.pump();
  }

  /**
   * Opens `GET /sse` over `node:http` without an agent: one socket per stream, closed with it.
   * (fetch's pool may open a spare connection when an aborted stream's socket closes, which then
   * sits idle and slows the node's shutdown in tests.)
   */
  static async open(url: string, token: string, headers: Record<string, string> = {}): Promise<RawStream> {
    const ctrl = new AbortController();
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.get(`${url}/sse`, { agent: false, headers: { authorization: `Bearer ${token}`, ...headers }, signal: ctrl.signal }, resolve);
      req.on('error', reject);
    });
    const response = new Response(Readable.toWeb(res) as ReadableStream, {
      status: res.statusCode,
      headers: Object.entries(res.headers).flatMap(([k, v]) => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => [k, x] as [string, string]))),
    });
    if (res.statusCode !== 200) throw new Error(`GET /sse answered ${res.statusCode}: ${await response.text()}`);
    return new RawStream(response, ctrl);
  }

  private async pump(): Promise<void> {
    const parser = new SseParser();
    const decoder = new TextDecoder();
    try {
      const reader = this.response.body!.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const chunk = decoder.decode(value, { stream: true });
        this.text += chunk;
        for (const m of parser.push(chunk)) this.frames.push(toFrame(m));
        this.wake();
      }
    } catch {
      /* aborted or reset */
    }
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits until `pred` holds for the frames so far (or the stream ended); fails after `ms`. */
  async until(pred: (frames: RawFrame[]) => boolean, ms = 5000, what = 'frames'): Promise<RawFrame[]> {
    const deadline = Date.now() + ms;
    while (!pred(this.frames)) {
      if (this.ended) throw new Error(`stream ended before ${what}; got ${JSON.stringify(this.frames.slice(-3))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${this.frames.length} frames`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.frames;
  }

  get sessionId(): string {
    return this.frames[0].data.session_id;
  }

  /** Frames carrying a `result` (node events). */
  results(): RawFrame[] {
    return this.frames.filter((f) => f.data.result);
  }

  close(): void {
    this.ctrl.abort();
  }
}

function toFrame(m: SseMessage): RawFrame {
  return m.id === undefined ? { data: JSON.parse(m.data) } : { id: m.id, data: JSON.parse(m.data) };
}

/** `POST /sse/subscription` with a raw token. */
export async function subscribeRaw(url: string, token: string, body: unknown): Promise<{ status: number; json: any; authError: string | null }> {
  const res = await fetch(`${url}/sse/subscription`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, authError: res.headers.get('x-auth-error') };
}

/**
 * A `fetch` for SDK clients under test: `GET …/sse` goes over `node:http` without a pool (see
 * `RawStream.open`), everything else through the global fetch.
 */
export function streamFetch(onStream?: (req: http.ClientRequest) => void): typeof fetch {
  return async (input, init) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if ((init?.method ?? 'GET').toUpperCase() !== 'GET' || !new URL(url).pathname.endsWith('/sse')) return fetch(input, init);
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.get(url, { agent: false, headers, signal: init?.signal ?? undefined }, resolve);
    req.on('error', reject);
    onStream?.(req);
  });
  return new Response(Readable.toWeb(res) as ReadableStream, {
    status: res.statusCode,
    headers: Object.entries(res.headers).flatMap(([k, v]) => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => [k, x] as [string, string]))),
  });
  };
}

export const streamFriendlyFetch = streamFetch();
