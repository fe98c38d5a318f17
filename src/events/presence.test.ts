import { expect, it } from 'vitest';
import { bindingOf } from '../auth/binding.ts';
import type { Principal } from '../auth/service.ts';
import { RpcMethodError } from '../contexts/rpc-methods.ts';
import { EventBus, type NodeEvent } from '../bus.ts';
import { PRESENCE_REMOTE_TTL_MS } from './constants.ts';
import { PresenceService } from './presence.ts';
import { presenceRpcMethods } from './presence-rpc.ts';

const CTX = 'aa'.repeat(32);
const ME = 'bb'.repeat(32);

function setup() {
  let now = 1_000;
  const bus = new EventBus();
  const events: NodeEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const presence = new PresenceService({ bus, clock: { now: () => now } });
  return { presence, events, advance: (ms: number) => (now += ms) };
}

it('publishes a live Ephemeral event only when the bytes change', () => {
  const { presence, events } = setup();
  expect(presence.set(CTX, ME, Uint8Array.from([1, 2]))).toBe(true);
  expect(presence.set(CTX, ME, Uint8Array.from([1, 2]))).toBe(false);
  presence.set(CTX, ME, Uint8Array.from([3]));
  expect(events).toEqual([
    { type: 'context', contextId: CTX, kind: 'Ephemeral', data: { author: ME, state: [1, 2] } },
    { type: 'context', contextId: CTX, kind: 'Ephemeral', data: { author: ME, state: [3] } },
  ]);
});

it('snapshots live slots with their age; the own slot never expires, remote ones do with a removal event', () => {
  const { presence, events, advance } = setup();
  const PEER = 'cc'.repeat(32);
  presence.set(CTX, ME, Uint8Array.from([1]));
  presence.set(CTX, PEER, Uint8Array.from([2]), { ttlMs: PRESENCE_REMOTE_TTL_MS });
  advance(250);
  expect(presence.snapshot(CTX)).toEqual([
    { author: ME, state: [1], ageMs: 250 },
    { author: PEER, state: [2], ageMs: 250 },
  ]);
  advance(PRESENCE_REMOTE_TTL_MS);
  presence.sweep();
  expect(presence.snapshot(CTX)).toEqual([{ author: ME, state: [1], ageMs: 7250 }]);
  expect(events.at(-1)).toEqual({ type: 'context', contextId: CTX, kind: 'Ephemeral', data: { author: PEER, removed: true } });
});

const principal = (permissions: string[]): Principal => ({ keyId: 'k', keyType: 'client', rootKeyId: 'r', permissions, binding: bindingOf(permissions) });

async function rpcError(p: Promise<unknown>): Promise<{ type: string; data: unknown }> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(RpcMethodError);
  return { type: (e as RpcMethodError).type, data: (e as RpcMethodError).data };
}

it('set_ephemeral records the node identity as author and answers {}', async () => {
  const { presence } = setup();
  const m = presenceRpcMethods(presence, { ownIdentity: async () => ({ author: ME, applicationId: null }) });
  const signal = new AbortController().signal;
  expect(await m.set_ephemeral({ params: { contextId: CTX, state: [123, 125] }, principal: principal(['admin']), signal })).toEqual({});
  expect(presence.snapshot(CTX)).toEqual([{ author: ME, state: [123, 125], ageMs: 0 }]);
});

it('set_ephemeral answers the reference error types', async () => {
  const { presence } = setup();
  const signal = new AbortController().signal;
  const m = presenceRpcMethods(presence, { ownIdentity: async (c) => (c === CTX ? { author: ME, applicationId: null } : null) });
  const admin = principal(['admin']);
  expect(await rpcError(m.set_ephemeral({ params: { contextId: CTX, state: new Array(16_385).fill(0) }, principal: admin, signal }))).toEqual({
    type: 'SliceTooLarge',
    data: { size: 16_385, max: 16_384 },
  });
  expect((await rpcError(m.set_ephemeral({ params: { contextId: CTX, state: [256] }, principal: admin, signal }))).type).toBe('ParseError');
  expect((await rpcError(m.set_ephemeral({ params: { contextId: 'x', state: [] }, principal: admin, signal }))).type).toBe('ParseError');
  expect((await rpcError(m.set_ephemeral({ params: { contextId: 'dd'.repeat(32), state: [] }, principal: admin, signal }))).type).toBe('NoOwnedIdentity');
  const bound = principal([`context[${'ee'.repeat(32)}]`]);
  expect((await rpcError(m.set_ephemeral({ params: { contextId: CTX, state: [] }, principal: bound, signal }))).type).toBe('Unauthorized');
});
