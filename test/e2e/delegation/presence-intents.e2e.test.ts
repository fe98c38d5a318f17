/**
 * `POST /admin-api/contexts/{id}/presence-intents` on the whole path (admin spec "Delegated
 * execution", Events rule 3): a real node and a kv-store context; an account's device signs a
 * `calimero/presence/1` statement and carries the reference-layout `AccountProof<DeviceCert>`; the
 * node relays it as an `Ephemeral` frame naming the account, and refuses a bad signature, a stale
 * seq, an unknown field and an account outside the context's group.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { ed25519FromSeed, mintProof, presenceBody, seedOf } from '../../helpers/presence.ts';
import { RawStream, streamFriendlyFetch, subscribeRaw } from '../../helpers/sse.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';
import { statusOf } from '../../helpers/status.ts';

let node: TestNode;
let c: Client;
let token: string;
let ctx: string;

beforeAll(async () => {
  node = await startTestNode();
  c = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore(), fetch: streamFriendlyFetch });
  await c.auth.login({ username: node.adminUser, password: node.adminPassword });
  token = (await c.tokenStore.get())!.accessToken;
  const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv.presence' });
  const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
  const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
  ctx = (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
}, 120_000);
afterAll(async () => node?.destroy());

/** A device of the node's own account (a member of the namespace): the root signs its certificate. */
function memberDevice(seed: number) {
  const device = ed25519FromSeed(seedOf(seed));
  const identity = node.node.identity;
  const proof = mintProof({ signWithRoot: (m) => Buffer.from(identity.signWithRoot(m), 'hex'), rootPublicKey: identity.rootPublicKey, device });
  return { device, proof };
}

const statusOf204 = (p: Promise<unknown>) => statusOf(p, 204);

it('relays a signed presence update: 204, and an Ephemeral frame naming the author account', async () => {
  const { device, proof } = memberDevice(0x61);
  expect(proof.statement.account).toBe(node.node.identity.accountId);
  const live = await RawStream.open(node.url, token);
  try {
    await live.until((f) => f.length >= 1);
    await subscribeRaw(node.url, token, { id: live.sessionId, method: 'subscribe', params: { contextIds: [ctx] } });
    const body = presenceBody({ contextId: ctx, device, proof, seq: 1, sentAtMs: Date.now(), state: { typing: true } });
    const res = await c.http.raw(`/admin-api/contexts/${ctx}/presence-intents`, { method: 'POST', body });
    expect(res.status).toBe(204);
    expect(res.bodyText).toBe('');
    const frames = await live.until((f) => f.some((x) => x.data.result?.type === 'Ephemeral'), 5000, 'the Ephemeral frame');
    expect(frames.find((x) => x.data.result?.type === 'Ephemeral')!.data.result).toEqual({
      contextId: ctx,
      type: 'Ephemeral',
      data: { author: node.node.identity.accountId, state: [...Buffer.from('{"typing":true}')] },
    });

    // a retraction through the SDK call removes the account's slot
    await c.contexts.postPresenceIntent(ctx, presenceBody({ contextId: ctx, device, proof, seq: 2, sentAtMs: Date.now(), state: null }));
    await live.until((f) => f.some((x) => x.data.result?.data?.removed === true), 5000, 'the removal frame');
  } finally {
    live.close();
  }
});

it('refuses a bad signature and a stale seq with 400', async () => {
  const { device, proof } = memberDevice(0x62);
  const good = presenceBody({ contextId: ctx, device, proof, seq: 5, sentAtMs: Date.now(), state: { here: 1 } });
  const forged = { ...good, signature: ed25519FromSeed(seedOf(0x63)).sign(Buffer.from('x')).toString('hex') };
  const bad = await c.http.raw(`/admin-api/contexts/${ctx}/presence-intents`, { method: 'POST', body: forged });
  expect(bad.status).toBe(400);
  expect(JSON.parse(bad.bodyText)).toEqual({ error: 'the signature does not verify under the author' });

  expect(await statusOf204(c.contexts.postPresenceIntent(ctx, good))).toBe(204);
  // the same statement again (a replay), then an older seq
  expect(await statusOf204(c.contexts.postPresenceIntent(ctx, good))).toBe(400);
  const older = presenceBody({ contextId: ctx, device, proof, seq: 4, sentAtMs: Date.now(), state: { here: 2 } });
  const res = await c.http.raw(`/admin-api/contexts/${ctx}/presence-intents`, { method: 'POST', body: older });
  expect(res.status).toBe(400);
  expect(JSON.parse(res.bodyText).error).toMatch(/stale seq: 4 is not above 5/);
  // a statement stamped outside the 7 s window
  const stale = presenceBody({ contextId: ctx, device, proof, seq: 9, sentAtMs: Date.now() - 60_000, state: { here: 3 } });
  expect(await statusOf204(c.contexts.postPresenceIntent(ctx, stale))).toBe(400);
});

it('refuses an unknown body field with 400 naming it', async () => {
  const { device, proof } = memberDevice(0x64);
  const body = { ...presenceBody({ contextId: ctx, device, proof, seq: 1, sentAtMs: Date.now(), state: null }), author: 'someone' };
  const res = await c.http.raw(`/admin-api/contexts/${ctx}/presence-intents`, { method: 'POST', body });
  expect(res.status).toBe(400);
  expect(JSON.parse(res.bodyText).error).toMatch(/unknown field body\.author/);
});

it('answers 403 for an account that is not a member of the context’s group', async () => {
  const root = ed25519FromSeed(seedOf(0x70));
  const device = ed25519FromSeed(seedOf(0x71));
  const proof = mintProof({ signWithRoot: root.sign, rootPublicKey: root.publicKey, device });
  const res = await c.http.raw(`/admin-api/contexts/${ctx}/presence-intents`, {
    method: 'POST',
    body: presenceBody({ contextId: ctx, device, proof, seq: 1, sentAtMs: Date.now(), state: { typing: true } }),
  });
  expect(res.status).toBe(403);
  expect(JSON.parse(res.bodyText).error).toMatch(/is not a member of this context's group/);
});

it('answers 404 for an unknown context', async () => {
  const { device, proof } = memberDevice(0x65);
  const other = 'ab'.repeat(32);
  expect(await statusOf204(c.contexts.postPresenceIntent(other, presenceBody({ contextId: other, device, proof, seq: 1, sentAtMs: Date.now(), state: null })))).toBe(404);
});
