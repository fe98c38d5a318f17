/**
 * The live event stream end to end (admin spec "Events"; admin-wire-a §8; admin-wire-b §10): a real
 * node on 127.0.0.1, driven through the SDK's `EventStream` / `EventSocket` over HTTP, and raw
 * `fetch` where the exact wire bytes matter. Context events are published on the node's bus (the
 * contract the contexts domain publishes by); group events come from real governance calls;
 * presence goes through `set_ephemeral` (the JSON-RPC method factory) and the PresenceService.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createClient,
  EventSocket,
  EventStream,
  MemoryTokenStore,
  SocketRequestError,
  tokensFromPair,
  type Client,
  type StreamFrame,
  type WebSocketConstructor,
} from '../../../src/client/index.ts';
import { presenceRpcMethods } from '../../../src/events/presence-rpc.ts';
import { RawStream, streamFriendlyFetch, subscribeRaw } from '../../helpers/sse.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';

const APP = '2b'.repeat(32);
const C1 = '1a'.repeat(32);
const C2 = '1b'.repeat(32);
const OTHER = '7c'.repeat(32);

let node: TestNode;
let admin: Client;
let token: string;
let ns: string;

const stateMutation = (contextId: string, i: number) =>
  node.node.bus.publish({
    type: 'context',
    contextId,
    kind: 'StateMutation',
    data: { newRoot: 'cd'.repeat(32), events: [{ kind: 'Inserted', data: Array.from(Buffer.from(JSON.stringify({ i }))), handler: null }] },
  });

async function clientFor(request: Parameters<Client['auth']['createClientKey']>[0]): Promise<{ client: Client; token: string }> {
  const pair = await admin.auth.createClientKey(request);
  const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore(tokensFromPair(pair.data)), fetch: streamFriendlyFetch });
  return { client, token: pair.data.access_token };
}

/** Collects SDK frames; `until` waits for a predicate with a deadline. */
function collect(stream: EventStream) {
  const frames: StreamFrame[] = [];
  let wake = () => undefined as void;
  stream.on('frame', (f) => {
    frames.push(f);
    wake();
  });
  return {
    frames,
    async until(pred: (fs: StreamFrame[]) => boolean, ms = 5000): Promise<void> {
      const deadline = Date.now() + ms;
      while (!pred(frames)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out; frames: ${JSON.stringify(frames.slice(-3))}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, left);
          wake = () => {
            clearTimeout(t);
            r();
          };
        });
      }
    },
  };
}

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

function connected(stream: EventStream): Promise<void> {
  return new Promise((resolve) => {
    const off = stream.on('connect', () => {
      off();
      resolve();
    });
  });
}

beforeAll(async () => {
  node = await startTestNode();
  admin = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore(), fetch: streamFriendlyFetch });
  await admin.auth.login({ username: node.adminUser, password: node.adminPassword });
  token = (await admin.tokenStore.get())!.accessToken;
  ns = (await admin.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: APP } })).namespaceId;
});
afterAll(async () => node?.destroy());

it('opens with the connect frame first: event, id, retry 3000, session headers', async () => {
  const s = await RawStream.open(node.url, token);
  try {
    expect(s.response.headers.get('content-type')).toBe('text/event-stream');
    expect(s.response.headers.get('cache-control')).toBe('no-cache');
    expect(s.response.headers.get('x-sse-reconnect')).toBe('false');
    await s.until((f) => f.length >= 1);
    const sid = s.response.headers.get('x-sse-session-id')!;
    expect(sid).toMatch(/^\d+$/);
    expect(s.text.startsWith(`event:message\nid:${sid}-0\nretry:3000\ndata:{"type":"connect","session_id":"${sid}","reconnect":false}\n\n`)).toBe(true);
  } finally {
    s.close();
  }
});

it('refuses a stream without a token and accepts ?token=', async () => {
  expect((await streamFriendlyFetch(`${node.url}/sse`)).status).toBe(401);
  const ctrl = new AbortController();
  const res = await streamFriendlyFetch(`${node.url}/sse?token=${encodeURIComponent(token)}`, { signal: ctrl.signal });
  expect(res.status).toBe(200);
  ctrl.abort();
});

it('answers the reference subscription errors', async () => {
  expect(await subscribeRaw(node.url, token, { id: 'abc', method: 'subscribe', params: {} })).toMatchObject({ status: 400, json: { error: 'Invalid Session Id' } });
  expect(await subscribeRaw(node.url, token, { id: '42', method: 'subscribe', params: {} })).toMatchObject({
    status: 404,
    json: { error: 'Session not found. Please reconnect to SSE endpoint first.' },
  });
  const s = await RawStream.open(node.url, token);
  await s.until((f) => f.length >= 1);
  const bad = await subscribeRaw(node.url, token, { id: s.sessionId, method: 'subscribe', params: { contextIds: ['not-an-id'] } });
  expect(bad.status).toBe(400);
  expect(bad.json.error).toContain('params.contextIds[0]');
  s.close();
});

it('streams context frames typed as the SDK expects; ExecutionEvent is never sent', async () => {
  const stream = new EventStream(admin.http, { reconnectDelayMs: 200 });
  const got = collect(stream);
  const open = connected(stream);
  await stream.subscribe({ contextIds: [C1] });
  stream.start();
  await open;
  // The subscription goes out on connect, as a POST in flight: wait until the node has it.
  await waitFor(() => node.node.events.hub.listeners(`c:${C1}`) > 0);
  node.node.bus.publish({ type: 'context', contextId: C1, kind: 'ExecutionEvent', data: {} });
  stateMutation(C1, 1);
  node.node.bus.publish({ type: 'context', contextId: C1, kind: 'SyncStatus', data: { syncState: { state: 'waitingForPeers' }, failureCount: 0 } });
  await got.until((fs) => fs.length >= 2);
  stream.stop();
  expect(got.frames.map((f) => f.type)).toEqual(['StateMutation', 'SyncStatus']);
  const sm = got.frames[0] as Extract<StreamFrame, { type: 'StateMutation' }>;
  expect(sm.contextId).toBe(C1);
  expect(JSON.parse(Buffer.from(sm.data.events[0].data).toString())).toEqual({ i: 1 });
  expect(sm.data.events[0].kind).toBe('Inserted');
});

it('sends group membership frames to group subscribers only, never to a context-only subscription', async () => {
  const X = '5e'.repeat(32);
  const groups = await RawStream.open(node.url, token);
  const contextsOnly = await RawStream.open(node.url, token);
  try {
    await groups.until((f) => f.length >= 1);
    await contextsOnly.until((f) => f.length >= 1);
    const sub = await subscribeRaw(node.url, token, { id: groups.sessionId, method: 'subscribe', params: { contextIds: [], groupIds: [ns, OTHER] } });
    expect(sub).toMatchObject({ status: 200, json: { result: { status: 'subscribed', contexts: [], groups: [ns] } } });
    await subscribeRaw(node.url, token, { id: contextsOnly.sessionId, method: 'subscribe', params: { contextIds: [C1] } });

    await admin.http.send(`/admin-api/groups/${ns}/members`, { method: 'POST', body: { members: [{ identity: X, role: 'Member' }] } });
    await admin.http.send(`/admin-api/groups/${ns}/members/remove`, { method: 'POST', body: { members: [X] } });
    const frames = await groups.until((f) => f.filter((x) => x.data.result).length >= 2);
    expect(frames.filter((x) => x.data.result).map((x) => x.data.result)).toEqual([
      { groupId: ns, type: 'MemberAdded', data: { memberAccount: X, role: 'Member' } },
      { groupId: ns, type: 'MemberRemoved', data: { memberAccount: X } },
    ]);
    stateMutation(C1, 2); // a marker: once it arrives, any group frame would have arrived before it
    await contextsOnly.until((f) => f.some((x) => x.data.result));
    expect(contextsOnly.results().map((x) => x.data.result.type)).toEqual(['StateMutation']);
  } finally {
    groups.close();
    contextsOnly.close();
  }
});

it('relays presence live (no ageMs, no removed) and replays it with ageMs on subscribe', async () => {
  const me = node.node.identity.publicKey;
  const rpc = presenceRpcMethods(node.node.presence, { ownIdentity: async () => ({ author: me, applicationId: null }) });
  const principal = { keyId: 'k', keyType: 'root' as const, rootKeyId: 'k', permissions: ['admin'], binding: { contexts: [], groups: [], applications: [] } };
  const live = await RawStream.open(node.url, token);
  try {
    await live.until((f) => f.length >= 1);
    await subscribeRaw(node.url, token, { id: live.sessionId, method: 'subscribe', params: { contextIds: [C2] } });
    const state = Array.from(Buffer.from(JSON.stringify({ cursor: 7 })));
    expect(await rpc.set_ephemeral({ params: { contextId: C2, state }, principal, signal: new AbortController().signal })).toEqual({});
    const [frame] = (await live.until((f) => f.some((x) => x.data.result))).filter((x) => x.data.result);
    expect(frame.data.result).toEqual({ contextId: C2, type: 'Ephemeral', data: { author: me, state } });

    const late = await RawStream.open(node.url, token);
    try {
      await late.until((f) => f.length >= 1);
      await subscribeRaw(node.url, token, { id: late.sessionId, method: 'subscribe', params: { contextIds: [C2] } });
      const seed = (await late.until((f) => f.some((x) => x.data.result))).find((x) => x.data.result)!;
      expect(seed.data.result).toMatchObject({ contextId: C2, type: 'Ephemeral', data: { author: me, state } });
      expect(seed.data.result.data.ageMs).toBeGreaterThanOrEqual(0);
      // The seed went to the new subscriber only.
      expect(live.results()).toHaveLength(1);
    } finally {
      late.close();
    }
  } finally {
    live.close();
  }
});

it('a client key bound to one context is refused others (403) and receives only its own frames', async () => {
  const { client, token: bound } = await clientFor({ context_id: C1 });
  const refused = await RawStream.open(node.url, bound);
  await refused.until((f) => f.length >= 1);
  const r = await subscribeRaw(node.url, bound, { id: refused.sessionId, method: 'subscribe', params: { contextIds: [C1, C2] } });
  expect(r.status).toBe(403);
  expect(r.authError).toBe('permission_denied');
  expect((await subscribeRaw(node.url, bound, { id: refused.sessionId, method: 'subscribe', params: { groupIds: [ns] } })).status).toBe(403);
  refused.close();

  const stream = new EventStream(client.http, { reconnectDelayMs: 200 });
  const got = collect(stream);
  const open = connected(stream);
  stream.start();
  await open;
  expect(await stream.subscribe({ contextIds: [C1] })).toEqual({ contexts: [C1], groups: [] });
  stateMutation(C2, 1);
  stateMutation(C1, 2);
  await got.until((fs) => fs.length >= 1);
  await new Promise((res) => setTimeout(res, 100));
  stream.stop();
  expect(got.frames.map((f) => ('contextId' in f ? f.contextId : f.groupId))).toEqual([C1]);
});

it('an unbound token keeps only the ids its permissions cover, silently', async () => {
  const { token: reader } = await clientFor({ permissions: [`context:list[${C1}]`] });
  const s = await RawStream.open(node.url, reader);
  try {
    await s.until((f) => f.length >= 1);
    const r = await subscribeRaw(node.url, reader, { id: s.sessionId, method: 'subscribe', params: { contextIds: [C1, C2], groupIds: [ns] } });
    expect(r).toMatchObject({ status: 200, json: { result: { status: 'subscribed', contexts: [C1], groups: [] } } });
    // Another key may not touch this session.
    expect((await subscribeRaw(node.url, token, { id: s.sessionId, method: 'subscribe', params: { contextIds: [C2] } })).status).toBe(403);
  } finally {
    s.close();
  }
});

it('serves the WebSocket protocol: subscribe reply, pushes, unsubscribe, and bound-key refusals', async () => {
  const socket = new EventSocket(admin.http, { WebSocket: WebSocket as unknown as WebSocketConstructor });
  const frames: StreamFrame[] = [];
  socket.on('frame', (f) => frames.push(f));
  await socket.connect();
  try {
    expect(await socket.subscribe({ contextIds: [C1] })).toEqual({ contextIds: [C1] });
    expect(await socket.subscribe({ groupIds: [ns, OTHER] })).toEqual({ contextIds: [], groupIds: [ns] });
    stateMutation(C1, 3);
    const deadline = Date.now() + 5000;
    while (frames.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(frames[0]).toMatchObject({ contextId: C1, type: 'StateMutation' });
    expect(await socket.unsubscribe({ contextIds: [C1, C2] })).toEqual({ contextIds: [C1] });
  } finally {
    socket.close();
  }

  const { client } = await clientFor({ context_id: C1 });
  const boundSocket = new EventSocket(client.http, { WebSocket: WebSocket as unknown as WebSocketConstructor });
  await boundSocket.connect();
  try {
    const err = await boundSocket.subscribe({ contextIds: [C2] }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(SocketRequestError);
    expect((err as SocketRequestError).type).toBe('Unauthorized');
  } finally {
    boundSocket.close();
  }
});

it('answers a plain GET /ws with 426', async () => {
  const res = await fetch(`${node.url}/ws`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(426);
  expect(await res.json()).toEqual({ error: 'Upgrade required: /ws is a WebSocket endpoint' });
});

it('refuses a WebSocket without a token', async () => {
  const ws = new WebSocket(`${node.url.replace('http', 'ws')}/ws`);
  const status = await new Promise<number>((resolve) => {
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => resolve(101));
    ws.on('error', () => resolve(-1));
  });
  ws.terminate();
  expect(status).toBe(401);
});
