/**
 * SSE frames written straight to the response's socket (sse-session.ts `SseConnection.out`): over
 * real HTTP, the bytes a client receives are exactly those of the stream path (chunk framing, ids,
 * order, close frame, the chunked terminator), for HTTP/1.1, HTTP/1.0 and HEAD, a resume continues
 * the numbering (backlog, then new frames; the replaced connection closed), and the frames
 * after the head do not go through the body stream.
 */
import http from 'node:http';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { bindingOf } from '../auth/binding.ts';
import type { Principal } from '../auth/service.ts';
import { EventBus } from '../bus.ts';
import { PresenceService } from './presence.ts';
import { EventStreamService } from './service.ts';

const CTX = 'aa'.repeat(32);
const OTHER = 'bb'.repeat(32);
const principal: Principal = { keyId: 'k', keyType: 'root', rootKeyId: 'k', permissions: ['admin'], binding: bindingOf(['admin']) };

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A node:http server that answers `/sse` the way the fastify route does (headers set, body piped). */
async function serve(direct: boolean) {
  const bus = new EventBus();
  const clock = { now: () => 1000 };
  const svc = new EventStreamService({ bus, clock, presence: new PresenceService({ bus, clock }), observe: { groupKnown: () => true } });
  svc.start();
  const viaBody: Buffer[] = [];
  let sessionId = '';
  const server = http.createServer((req, res) => {
    const o = svc.openSse(principal, req.headers['last-event-id'] as string | undefined);
    sessionId = o.session.id;
    const body = new PassThrough({ highWaterMark: 16 * 1024 });
    // what is written through the body stream (a 'data' listener would take it from the pipe)
    const write = body.write.bind(body) as (chunk: string | Buffer) => boolean;
    body.write = ((chunk: string | Buffer) => (viaBody.push(Buffer.from(chunk)), write(chunk))) as typeof body.write;
    res.setHeader('content-type', 'text/event-stream');
    res.setHeader('connection', 'close');
    o.session.attach(body, o.head, o.sentUpTo, direct ? res : undefined);
    res.on('close', () => body.destroy());
    body.pipe(res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const publish = (contextId: string, i: number) =>
    bus.publish({ type: 'context', contextId, kind: 'StateMutation', data: { newRoot: 'cd'.repeat(32), events: [{ kind: 'K', data: [i, 1, 2], handler: null }] } });
  return { svc, port, publish, viaBody, sessionId: () => sessionId };
}

/** Sends a raw request; answers the bytes received so far and when the server closed. */
function client(port: number, request: string) {
  const socket = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c) => chunks.push(c));
  const ended = new Promise<void>((r) => socket.on('close', () => r()));
  socket.write(request);
  return { bytes: () => Buffer.concat(chunks), ended };
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(ok()).toBe(true);
};

/** Runs the same session through a server; answers the body bytes (after the headers). */
async function run(direct: boolean, request: string) {
  const s = await serve(direct);
  const c = client(s.port, request);
  await until(() => s.sessionId() !== '' && c.bytes().includes('connect'));
  await s.svc.subscription(principal, { id: s.sessionId(), method: 'subscribe', params: { contexts: [CTX], groups: [] } });
  await new Promise((r) => setTimeout(r, 20)); // the head has passed through: frames may now go direct
  for (let i = 1; i <= 3; i++) {
    s.publish(CTX, i);
    s.publish(OTHER, i); // not subscribed: never sent
  }
  await new Promise((r) => setTimeout(r, 20));
  s.publish(CTX, 4);
  await new Promise((r) => setTimeout(r, 20));
  s.svc.stop(); // close frame, then the end of the response
  await c.ended;
  const all = c.bytes();
  const split = all.indexOf('\r\n\r\n');
  return { head: all.subarray(0, split).toString(), body: all.subarray(split + 4), sessionId: s.sessionId(), viaBody: s.viaBody };
}

/** Undoes HTTP/1.1 chunk framing; fails on a malformed chunk. */
function unchunk(body: Buffer): { text: string; chunks: number; terminated: boolean } {
  let at = 0;
  let text = '';
  let chunks = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) return { text, chunks, terminated: false };
    const size = parseInt(body.subarray(at, eol).toString(), 16);
    expect(Number.isNaN(size)).toBe(false);
    if (size === 0) return { text, chunks, terminated: body.subarray(eol, eol + 4).toString() === '\r\n\r\n' };
    text += body.subarray(eol + 2, eol + 2 + size).toString();
    expect(body.subarray(eol + 2 + size, eol + 4 + size).toString()).toBe('\r\n');
    at = eol + 4 + size;
    chunks++;
  }
}

describe('SSE frames written to the socket', () => {
  it('HTTP/1.1: the same chunks, ids and close frame as the stream path; only the head goes through the body stream', async () => {
    const req = 'GET /sse HTTP/1.1\r\nHost: x\r\n\r\n';
    const slow = await run(false, req);
    const fast = await run(true, req);
    for (const r of [slow, fast]) expect(r.head).toMatch(/transfer-encoding: chunked/i);
    const a = unchunk(slow.body);
    const b = unchunk(fast.body);
    expect(b.terminated).toBe(true);
    expect(b.chunks).toBe(a.chunks);
    // byte for byte, session ids aside
    expect(b.text.replaceAll(fast.sessionId, 'S')).toBe(a.text.replaceAll(slow.sessionId, 'S'));
    const ids = [...b.text.matchAll(/^id:(.*)$/gm)].map((m) => m[1]);
    expect(ids).toEqual([0, 1, 2, 3, 4].map((n) => `${fast.sessionId}-${n}`));
    expect(b.text).toMatch(/data:\{"type":"close","reason":"node shutting down"\}\n\n$/);
    expect(b.text).not.toContain(OTHER);
    expect(Buffer.concat(fast.viaBody).toString()).toMatch(/^event:message\nid:\d+-0\nretry:\d+\ndata:\{"type":"connect".*\n\n$/);
    expect(slow.viaBody.length).toBe(6); // head, four frames, close frame
  });

  it('HTTP/1.0: unframed bytes, the same as the stream path, the end of the body at the close', async () => {
    const req = 'GET /sse HTTP/1.0\r\nHost: x\r\n\r\n';
    const slow = await run(false, req);
    const fast = await run(true, req);
    expect(fast.head).not.toMatch(/transfer-encoding/i);
    expect(fast.body.toString().replaceAll(fast.sessionId, 'S')).toBe(slow.body.toString().replaceAll(slow.sessionId, 'S'));
    expect(fast.body.toString().match(/^id:/gm)).toHaveLength(5);
    expect(fast.viaBody.length).toBe(1);
  });

  it('a resume after direct frames continues the same numbering: backlog first, then new frames', async () => {
    const s = await serve(true);
    const first = client(s.port, 'GET /sse HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => s.sessionId() !== '' && first.bytes().includes('connect'));
    const sid = s.sessionId();
    await s.svc.subscription(principal, { id: sid, method: 'subscribe', params: { contexts: [CTX], groups: [] } });
    await new Promise((r) => setTimeout(r, 20));
    s.publish(CTX, 1);
    s.publish(CTX, 2);
    await until(() => unchunk(first.bytes().subarray(first.bytes().indexOf('\r\n\r\n') + 4)).text.includes(`id:${sid}-2`));
    const viaBodyBefore = s.viaBody.length;
    expect(viaBodyBefore).toBe(1); // the head only: frames 1 and 2 went to the socket
    // frame 3, then the client resumes after frame 1 on a new connection (the first one is replaced)
    s.publish(CTX, 3);
    const second = client(s.port, `GET /sse HTTP/1.1\r\nHost: x\r\nLast-Event-ID: ${sid}-1\r\n\r\n`);
    await until(() => unchunk(second.bytes().subarray(second.bytes().indexOf('\r\n\r\n') + 4)).text.includes(`id:${sid}-3`));
    await new Promise((r) => setTimeout(r, 20));
    s.publish(CTX, 4);
    await until(() => unchunk(second.bytes().subarray(second.bytes().indexOf('\r\n\r\n') + 4)).text.includes(`id:${sid}-4`));
    const text = unchunk(second.bytes().subarray(second.bytes().indexOf('\r\n\r\n') + 4)).text;
    expect([...text.matchAll(/^id:(.*)$/gm)].map((m) => m[1])).toEqual([`${sid}-1`, `${sid}-2`, `${sid}-3`, `${sid}-4`]);
    expect(text).toContain('"reconnect":true');
    // frames 1..4 in order, each once: [1,1,2] [2,1,2] [3,1,2] [4,1,2] as the events' data
    expect([...text.matchAll(/"data":\[(\d+),1,2\]/g)].map((m) => Number(m[1]))).toEqual([2, 3, 4]);
    await first.ended;
    expect(first.bytes().toString()).toContain('replaced: another connection resumed this session');
    s.svc.stop();
    await second.ended;
  });

  it('HEAD: no body at all, frames or not', async () => {
    const s = await serve(true);
    const c = client(s.port, 'HEAD /sse HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => s.sessionId() !== ''); // (a HEAD answer's headers go out at its end)
    await s.svc.subscription(principal, { id: s.sessionId(), method: 'subscribe', params: { contexts: [CTX], groups: [] } });
    await new Promise((r) => setTimeout(r, 20));
    s.publish(CTX, 1);
    await new Promise((r) => setTimeout(r, 20));
    s.svc.stop();
    await c.ended;
    expect(c.bytes().toString()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(c.bytes().toString().split('\r\n\r\n')[1]).toBe('');
  });
});
