/**
 * Conformance: the live event stream (admin spec "Events"; admin-wire-a §8), through the SDK's
 * `EventStream` (SSE: open, subscribe, inspect the session, unsubscribe) and `EventSocket` (the
 * `/ws` upgrade, observed through the `ws` client's `upgrade` event and recorded as a 101).
 * Events are published on the node's bus, as the node's domains do.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EventSocket, EventStream, type Client, type StreamFrame, type WebSocketConstructor } from '../../src/client/index.ts';
import { Conformance } from '../helpers/conformance.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

const C1 = 'c1'.repeat(32);
let node: TestNode;
let conformance: Conformance;
let c: Client;

beforeAll(async () => {
  node = await startTestNode();
  conformance = await Conformance.load(node.url);
  c = conformance.client();
  await c.auth.login({ username: node.adminUser, password: node.adminPassword });
});
afterAll(async () => node?.destroy());

const stateMutation = (i: number) =>
  node.node.bus.publish({
    type: 'context',
    contextId: C1,
    kind: 'StateMutation',
    data: { newRoot: 'cd'.repeat(32), events: [{ kind: 'Inserted', data: [...Buffer.from(JSON.stringify({ i }))], handler: null }] },
  });

async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The `ws` client, recording the status of its upgrade answer in the checker. */
class RecordingWebSocket extends WebSocket {
  constructor(url: string) {
    super(url);
    this.once('upgrade', (res) => {
      conformance.record({ method: 'GET', path: new URL(url).pathname, status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '' });
    });
  }
}

it('streams over SSE: connect, subscribe, session info, a pushed frame, unsubscribe', async () => {
  const stream = new EventStream(c.http, { reconnectDelayMs: 200 });
  const frames: StreamFrame[] = [];
  stream.on('frame', (f) => frames.push(f));
  stream.start();
  try {
    await until(() => stream.sessionId !== undefined, 'the connect frame');
    expect(await stream.subscribe({ contextIds: [C1] })).toEqual({ contexts: [C1], groups: [] });
    const info = await stream.sessionInfo();
    expect(info).toMatchObject({ subscriptions: [C1], status: 'active' });
    expect(info).not.toHaveProperty('groups');
    expect(String(info.session_id)).toBe(stream.sessionId);

    stateMutation(1);
    await until(() => frames.length > 0, 'the StateMutation frame');
    expect(frames[0]).toMatchObject({ contextId: C1, type: 'StateMutation', data: { newRoot: 'cd'.repeat(32) } });

    await stream.unsubscribe({ contextIds: [C1] });
    expect((await stream.sessionInfo()).subscriptions).toEqual([]);
  } finally {
    stream.stop();
  }
});

it('streams over the WebSocket: 101 upgrade, subscribe, a pushed frame, unsubscribe; a plain GET is 426', async () => {
  const socket = new EventSocket(c.http, { WebSocket: RecordingWebSocket as unknown as WebSocketConstructor });
  const frames: StreamFrame[] = [];
  socket.on('frame', (f) => frames.push(f));
  await socket.connect();
  try {
    expect(conformance.exchanges.filter((e) => e.path === '/ws').map((e) => e.status)).toEqual([101]);
    expect(await socket.subscribe({ contextIds: [C1] })).toEqual({ contextIds: [C1] });
    stateMutation(2);
    await until(() => frames.length > 0, 'the StateMutation frame');
    expect(frames[0]).toMatchObject({ contextId: C1, type: 'StateMutation' });
    expect(await socket.unsubscribe({ contextIds: [C1] })).toEqual({ contextIds: [C1] });
  } finally {
    socket.close();
  }

  const plain = await c.http.raw('/ws');
  expect(plain.status).toBe(426);

  conformance.assertAreaCovered('events');
});
