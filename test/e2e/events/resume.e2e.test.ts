/**
 * The event stream's resume contract end to end (docs/events.md "Resume contract"): a client that
 * loses its connection resumes with `Last-Event-ID` and misses nothing; a resume the replay buffer
 * cannot cover gets an explicit gap frame; a consumer that stops reading is dropped without
 * slowing another; the node closes streams with a close frame when it stops.
 */
import type http from 'node:http';
import net from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, EventStream, MemoryTokenStore, type Client, type StreamFrame } from '../../../src/client/index.ts';
import { REPLAY_BUFFER_FRAMES } from '../../../src/events/constants.ts';
import { RawStream, streamFetch, subscribeRaw } from '../../helpers/sse.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';

const CTX = '3d'.repeat(32);

let node: TestNode;
let admin: Client;
let token: string;

const publish = (i: number, payload: number[] = []) =>
  node.node.bus.publish({ type: 'context', contextId: CTX, kind: 'StateMutation', data: { newRoot: 'ee'.repeat(32), events: [{ kind: 'Tick', data: payload, handler: null }], i } });
const indexOf = (f: StreamFrame): number => (f.data as { i: number }).i;

async function waitFor(cond: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function sessionStatus(sid: string): Promise<string> {
  const res = await fetch(`${node.url}/sse/session/${sid}`, { headers: { authorization: `Bearer ${token}` } });
  return (await res.json()).result.status;
}

beforeAll(async () => {
  node = await startTestNode();
  admin = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await admin.auth.login({ username: node.adminUser, password: node.adminPassword });
  token = (await admin.tokenStore.get())!.accessToken;
});
afterAll(async () => node?.destroy());

it('the SDK resumes after a forced disconnect with Last-Event-ID: every frame once, in order', async () => {
  let current: http.ClientRequest | undefined;
  const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore(await admin.tokenStore.get()), fetch: streamFetch((r) => (current = r)) });
  const stream = new EventStream(client.http, { reconnectDelayMs: 100 });
  const frames: StreamFrame[] = [];
  const connects: { sessionId: string; reconnect: boolean }[] = [];
  stream.on('frame', (f) => frames.push(f));
  stream.on('connect', (c) => connects.push(c));
  await stream.subscribe({ contextIds: [CTX] });
  stream.start();
  try {
    await waitFor(() => node.node.events.hub.listeners(`c:${CTX}`) > 0, 5000, 'the subscription');
    for (let i = 1; i <= 5; i++) publish(i);
    await waitFor(() => frames.length === 5, 5000, 'the first five frames');
    current!.destroy(); // the connection drops under the client
    await waitFor(async () => (await sessionStatus(connects[0].sessionId)) === 'persisted', 5000, 'the node to notice');
    for (let i = 6; i <= 10; i++) publish(i); // sent while the client is away
    await waitFor(() => frames.length >= 10 && connects.length === 2, 5000, 'the resume');
    for (let i = 11; i <= 12; i++) publish(i);
    await waitFor(() => frames.length >= 12, 5000, 'live frames after the resume');
    expect(connects).toEqual([
      { sessionId: connects[0].sessionId, reconnect: false },
      { sessionId: connects[0].sessionId, reconnect: true },
    ]);
    expect(frames.map(indexOf)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(stream.lastEventId).toBe(`${connects[0].sessionId}-12`);
  } finally {
    stream.stop();
  }
});

it('sends a gap frame when the replay buffer no longer covers the resume point', async () => {
  const first = await RawStream.open(node.url, token);
  await first.until((f) => f.length >= 1);
  const sid = first.sessionId;
  await subscribeRaw(node.url, token, { id: sid, method: 'subscribe', params: { contextIds: [CTX] } });
  publish(1);
  await first.until((f) => f.length >= 2);
  first.close();
  await waitFor(async () => (await sessionStatus(sid)) === 'persisted', 5000, 'the node to notice');
  const total = REPLAY_BUFFER_FRAMES + 100;
  for (let i = 2; i <= total; i++) publish(i);

  const resumed = await RawStream.open(node.url, token, { 'last-event-id': `${sid}-1` });
  try {
    expect(resumed.response.headers.get('x-sse-reconnect')).toBe('true');
    const lost = total - REPLAY_BUFFER_FRAMES; // frames 2..lost are gone
    const frames = await resumed.until((f) => f.length >= 2 + REPLAY_BUFFER_FRAMES, 10_000, 'the replay');
    expect(frames[0]).toEqual({ id: `${sid}-${lost}`, data: { type: 'connect', session_id: sid, reconnect: true } });
    expect(frames[1]).toEqual({ data: { type: 'gap', reason: 'buffer_exceeded', lastEventId: `${sid}-1`, resumedAfter: `${sid}-${lost}`, missed: lost - 1 } });
    const replayed = frames.slice(2);
    expect(replayed[0]).toMatchObject({ id: `${sid}-${lost + 1}`, data: { result: { data: { i: lost + 1 } } } });
    expect(replayed.map((f) => f.data.result.data.i)).toEqual(Array.from({ length: REPLAY_BUFFER_FRAMES }, (_, k) => lost + 1 + k));
  } finally {
    resumed.close();
  }

  const stranger = await RawStream.open(node.url, token, { 'last-event-id': '123-5' });
  try {
    const frames = await stranger.until((f) => f.length >= 2);
    expect(frames[0].data).toMatchObject({ type: 'connect', reconnect: false });
    expect(frames[1].data).toMatchObject({ type: 'gap', reason: 'session_unknown', lastEventId: '123-5', missed: null });
  } finally {
    stranger.close();
  }
});

it('drops a consumer that stops reading, without holding back a fast one', async () => {
  // The slow consumer: a raw socket that reads the connect frame and then never reads again.
  const { port } = new URL(node.url);
  // The node-side end of the slow connection, to see the node let go of it.
  let serverSide: net.Socket | undefined;
  const server = (node.node as unknown as { app: { server: net.Server } }).app.server;
  const onConnection = (sock: net.Socket) => {
    if (sock.remotePort === slow.localPort) serverSide = sock;
  };
  server.on('connection', onConnection);
  const slow = net.connect(Number(port), '127.0.0.1');
  let closed = false;
  slow.on('end', () => (closed = true));
  slow.on('close', () => (closed = true));
  slow.on('error', () => (closed = true));
  slow.write(`GET /sse HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${token}\r\n\r\n`);
  const slowSid = await new Promise<string>((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const m = /"session_id":"(\d+)"/.exec(text);
      if (m) {
        slow.off('data', onData);
        slow.pause();
        resolve(m[1]);
      }
    };
    slow.on('data', onData);
  });
  const fast = await RawStream.open(node.url, token);
  try {
    await fast.until((f) => f.length >= 1);
    await subscribeRaw(node.url, token, { id: slowSid, method: 'subscribe', params: { contextIds: [CTX] } });
    await subscribeRaw(node.url, token, { id: fast.sessionId, method: 'subscribe', params: { contextIds: [CTX] } });

    const payload = Array.from({ length: 12_000 }, (_, k) => (k * 7) % 256); // ~45 KB of JSON per frame
    const total = 700;
    // Bursts of 10, each once the fast reader is within 50 frames: it keeps up by construction
    // (also on a loaded machine, where it shares this process with the node); the slow one never reads.
    for (let i = 1; i <= total; i++) {
      publish(i, payload);
      if (i % 10 === 0) await fast.until((f) => f.filter((x) => x.data.result).length >= i - 50, 20_000, `frame ${i - 50}`);
    }
    const frames = await fast.until((f) => f.filter((x) => x.data.result).length >= total, 20_000, 'every frame on the fast stream');
    expect(frames.filter((x) => x.data.result).map((x) => x.data.result.data.i)).toEqual(Array.from({ length: total }, (_, k) => k + 1));
    expect(await sessionStatus(slowSid)).toBe('persisted');
    expect(await sessionStatus(fast.sessionId)).toBe('active');
    // The node does not wait for the stuck reader: it closes the socket within the flush deadline,
    // and a reader that wakes up later finds the stream ended.
    await waitFor(() => serverSide?.destroyed === true, 5000, 'the node to close the slow socket');
    slow.on('data', () => undefined);
    slow.resume();
    await waitFor(() => closed, 5000, 'the slow stream to end');
  } finally {
    server.off('connection', onConnection);
    fast.close();
    slow.destroy();
  }
});

it('closes a WebSocket that stops reading, without holding back an SSE reader', async () => {
  const ws = new WebSocket(`${node.url.replace('http', 'ws')}/ws?token=${encodeURIComponent(token)}`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let closeCode: number | undefined;
  ws.on('close', (code) => (closeCode = code));
  ws.on('error', () => undefined);
  const replied = new Promise((resolve) => ws.once('message', resolve));
  ws.send(JSON.stringify({ id: 1, method: 'subscribe', params: { contextIds: [CTX] } }));
  await replied;
  const fast = await RawStream.open(node.url, token);
  try {
    await fast.until((f) => f.length >= 1);
    await subscribeRaw(node.url, token, { id: fast.sessionId, method: 'subscribe', params: { contextIds: [CTX] } });
    const listening = node.node.events.hub.listeners(`c:${CTX}`);
    (ws as unknown as { _socket: net.Socket })._socket.pause(); // the client stops reading

    const payload = Array.from({ length: 12_000 }, (_, k) => (k * 13) % 256);
    const total = 500;
    for (let i = 1; i <= total; i++) {
      publish(i, payload);
      if (i % 10 === 0) await fast.until((f) => f.filter((x) => x.data.result).length >= i - 50, 20_000, `frame ${i - 50}`);
    }
    const frames = await fast.until((f) => f.filter((x) => x.data.result).length >= total, 20_000, 'every frame on the SSE stream');
    expect(frames.filter((x) => x.data.result).map((x) => x.data.result.data.i)).toEqual(Array.from({ length: total }, (_, k) => k + 1));
    // The node let go of the socket (its subscription is gone) ...
    await waitFor(() => node.node.events.hub.listeners(`c:${CTX}`) === listening - 1, 5000, 'the socket to be dropped');
    // ... and a client that reads again finds it closed.
    (ws as unknown as { _socket: net.Socket })._socket.resume();
    await waitFor(() => closeCode !== undefined, 5000, 'the close');
    expect([1013, 1006]).toContain(closeCode);
  } finally {
    fast.close();
    ws.terminate();
  }
});

it('closes open streams with a close frame when the node stops', async () => {
  const s = await RawStream.open(node.url, token);
  await s.until((f) => f.length >= 1);
  const started = Date.now();
  await node.stop();
  expect(Date.now() - started).toBeLessThan(3000);
  await s.until(() => s.ended, 3000, 'the stream to end');
  expect(s.frames.at(-1)).toEqual({ data: { type: 'close', reason: 'node shutting down' } });
});
