/**
 * The event stream on the whole path (admin-wire-a §7, §8): a real context of the kv-store test
 * app; `execute` over JSON-RPC produces a `StateMutation` frame, `set_ephemeral` over JSON-RPC a
 * presence frame and a replay seed, `/ws` runs `execute`, and an application-bound client key
 * observes the contexts of its application only.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createClient,
  decodeJsonBytes,
  EventStream,
  MemoryTokenStore,
  type Client,
  type StreamFrame,
} from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { RawStream, streamFriendlyFetch, subscribeRaw } from '../../helpers/sse.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

let node: TestNode;
let c: Client;
let token: string;
let appId: string;
let ctx: string;

async function waitFor(cond: () => boolean, ms = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  node = await startTestNode();
  c = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore(), fetch: streamFriendlyFetch });
  await c.auth.login({ username: node.adminUser, password: node.adminPassword });
  token = (await c.tokenStore.get())!.accessToken;
  const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv.events' });
  appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
  const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
  ctx = (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
}, 120_000);
afterAll(async () => node?.destroy());

it('a JSON-RPC execute that changes state reaches a subscriber as a StateMutation frame', async () => {
  const stream = new EventStream(c.http, { reconnectDelayMs: 200 });
  const frames: StreamFrame[] = [];
  stream.on('frame', (f) => frames.push(f));
  stream.start();
  try {
    await waitFor(() => stream.sessionId !== undefined, 5000, 'the connect frame');
    expect(await stream.subscribe({ contextIds: [ctx] })).toEqual({ contexts: [ctx], groups: [] });
    expect(await c.rpc.execute(ctx, 'set', { key: 'k', value: 'hello' })).toBeNull();
    await waitFor(() => frames.some((f) => f.type === 'StateMutation'), 5000, 'the StateMutation frame');
    const frame = frames.find((f) => f.type === 'StateMutation') as Extract<StreamFrame, { type: 'StateMutation' }>;
    expect(frame.contextId).toBe(ctx);
    expect(frame.data.newRoot).toBe((await c.contexts.get(ctx)).contextStateHash);
    expect(frame.data.events.map((e) => ({ kind: e.kind, data: decodeJsonBytes(e.data) }))).toEqual([{ kind: 'Inserted', data: { key: 'k', value: 'hello' } }]);
  } finally {
    stream.stop();
  }
});

it('set_ephemeral over JSON-RPC sends a live presence frame and seeds later subscribers', async () => {
  const me = node.node.identity.publicKey;
  const live = await RawStream.open(node.url, token);
  try {
    await live.until((f) => f.length >= 1);
    await subscribeRaw(node.url, token, { id: live.sessionId, method: 'subscribe', params: { contextIds: [ctx] } });
    const state = Array.from(new TextEncoder().encode(JSON.stringify({ typing: true })));
    expect(await c.rpc.request('set_ephemeral', { contextId: ctx, state })).toEqual({});
    const frames = await live.until((f) => f.some((x) => x.data.result?.type === 'Ephemeral'));
    expect(frames.find((x) => x.data.result?.type === 'Ephemeral')!.data.result).toEqual({ contextId: ctx, type: 'Ephemeral', data: { author: me, state } });

    const late = await RawStream.open(node.url, token);
    try {
      await late.until((f) => f.length >= 1);
      await subscribeRaw(node.url, token, { id: late.sessionId, method: 'subscribe', params: { contextIds: [ctx] } });
      const seed = (await late.until((f) => f.some((x) => x.data.result))).find((x) => x.data.result)!.data.result;
      expect(seed).toMatchObject({ contextId: ctx, type: 'Ephemeral', data: { author: me, state } });
      expect(typeof seed.data.ageMs).toBe('number');
    } finally {
      late.close();
    }
  } finally {
    live.close();
  }
});

it('runs execute frames over /ws', async () => {
  const ws = new WebSocket(`${node.url.replace('http', 'ws')}/ws?token=${encodeURIComponent(token)}`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  try {
    const reply = new Promise<any>((resolve) => ws.on('message', (m) => resolve(JSON.parse(m.toString()))));
    ws.send(JSON.stringify({ id: 5, method: 'execute', params: { contextId: ctx, method: 'get', argsJson: { key: 'k' } } }));
    expect(await reply).toEqual({ id: 5, result: { output: 'hello' } });
  } finally {
    ws.close();
  }
});

it('an application-bound client key observes its application’s contexts and is refused others', async () => {
  const pair = await c.auth.createClientKey({ application_id: appId, permissions: ['context:list'] });
  const bound = pair.data.access_token;
  const s = await RawStream.open(node.url, bound);
  try {
    await s.until((f) => f.length >= 1);
    expect(await subscribeRaw(node.url, bound, { id: s.sessionId, method: 'subscribe', params: { contextIds: [ctx] } })).toMatchObject({
      status: 200,
      json: { result: { contexts: [ctx] } },
    });
    const elsewhere = await subscribeRaw(node.url, bound, { id: s.sessionId, method: 'subscribe', params: { contextIds: ['9f'.repeat(32)] } });
    expect(elsewhere).toMatchObject({ status: 403, authError: 'permission_denied' });
  } finally {
    s.close();
  }
});
