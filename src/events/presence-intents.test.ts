import { describe, expect, it } from 'vitest';
import { ed25519FromSeed, mintProof, presenceBody, seedOf } from '../../test/helpers/presence.ts';
import { HearthError } from '../errors.ts';
import type { GroupState, NamespaceState } from '../governance/types.ts';
import { EventBus, type NodeEvent } from '../bus.ts';
import { PRESENCE_REMOTE_TTL_MS } from './constants.ts';
import { parsePresenceIntentRequest, PRESENCE_FRESHNESS_MS, PresenceIntentService } from './presence-intents.ts';
import { PresenceService } from './presence.ts';

const CTX = '11'.repeat(32);
const NOW = 1_700_000_000_000;
const root = ed25519FromSeed(seedOf(0x55));
const device = ed25519FromSeed(seedOf(0x66));
const proof = mintProof({ signWithRoot: root.sign, rootPublicKey: root.publicKey, device });
const ACCOUNT = proof.statement.account;

function setup(members: string[] = [ACCOUNT]) {
  let now = NOW;
  const clock = { now: () => now };
  const bus = new EventBus();
  const events: NodeEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const presence = new PresenceService({ bus, clock });
  const group = { id: 'cc'.repeat(32), parentId: null, members: Object.fromEntries(members.map((a) => [a, { role: 'Member' }])), defaultCapabilities: 0, contexts: { [CTX]: {} }, subgroupVisibility: 'open' } as unknown as GroupState;
  const ns = { id: group.id, groups: { [group.id]: group } } as unknown as NamespaceState;
  const service = new PresenceIntentService({ presence, clock, locateContext: (id) => (id === CTX ? { ns, group } : undefined) });
  const send = (o: { seq: number | bigint; sentAtMs?: number; state?: unknown | null; contextId?: string }, path = CTX) =>
    service.publish(path, parsePresenceIntentRequest(presenceBody({ contextId: o.contextId ?? CTX, device, proof, seq: o.seq, sentAtMs: o.sentAtMs ?? now, state: o.state === undefined ? { typing: true } : o.state })));
  return { service, presence, events, ns, send, advance: (ms: number) => (now += ms) };
}

const statusOf = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    if (err instanceof HearthError) return `${err.kind}: ${err.message}`;
    throw err;
  }
  return 'ok';
};

describe('PresenceIntentService', () => {
  it('publishes a verified update as an Ephemeral event naming the author account, with the remote TTL', () => {
    const { send, events, presence, advance } = setup();
    expect(send({ seq: 1 })).toEqual({ accountId: ACCOUNT });
    expect(events).toEqual([{ type: 'context', contextId: CTX, kind: 'Ephemeral', data: { author: ACCOUNT, state: [...Buffer.from('{"typing":true}')] } }]);
    advance(PRESENCE_REMOTE_TTL_MS);
    presence.sweep();
    expect(events.at(-1)).toEqual({ type: 'context', contextId: CTX, kind: 'Ephemeral', data: { author: ACCOUNT, removed: true } });
  });

  it('retracts with state null', () => {
    const { send, events } = setup();
    send({ seq: 1 });
    send({ seq: 2, state: null });
    expect(events.at(-1)).toEqual({ type: 'context', contextId: CTX, kind: 'Ephemeral', data: { author: ACCOUNT, removed: true } });
  });

  it('refuses a replay and a seq at or below the last accepted one', () => {
    const { send } = setup();
    send({ seq: 5 });
    expect(statusOf(() => send({ seq: 5 }))).toMatch(/^bad_request: stale seq: 5 is not above 5/);
    expect(statusOf(() => send({ seq: 4 }))).toMatch(/^bad_request: stale seq/);
    expect(statusOf(() => send({ seq: 6 }))).toBe('ok');
  });

  it('refuses a statement outside the 7 s freshness window, either way', () => {
    const { send } = setup();
    expect(statusOf(() => send({ seq: 1, sentAtMs: NOW - PRESENCE_FRESHNESS_MS - 1 }))).toMatch(/^bad_request: the statement is outside the freshness window/);
    expect(statusOf(() => send({ seq: 1, sentAtMs: NOW + PRESENCE_FRESHNESS_MS + 1 }))).toMatch(/freshness window/);
    expect(statusOf(() => send({ seq: 1, sentAtMs: NOW - PRESENCE_FRESHNESS_MS }))).toBe('ok');
  });

  it('refuses a statement signed for another context than the path', () => {
    const { send } = setup();
    expect(statusOf(() => send({ seq: 1, contextId: '99'.repeat(32) }))).toBe('bad_request: the signature does not verify under the author');
  });

  it('answers 403 for an account that is not a member and for a revoked device, 404 for an unknown context', () => {
    expect(statusOf(() => setup(['ab'.repeat(32)]).send({ seq: 1 }))).toMatch(/^forbidden: the account .* is not a member/);
    const revoked = setup();
    revoked.ns.deviceBindings = { [ACCOUNT]: { [proof.statement.device]: { signingKey: device.publicKey, linkedAt: 0, revokedAt: 1 } } };
    expect(statusOf(() => revoked.send({ seq: 1 }))).toMatch(/^forbidden: the device .* is revoked here/);
    const { service } = setup();
    const body = parsePresenceIntentRequest(presenceBody({ contextId: 'ee'.repeat(32), device, proof, seq: 1, sentAtMs: NOW, state: null }));
    expect(statusOf(() => service.publish('ee'.repeat(32), body))).toBe('not_found: Context not found');
  });

  it('answers 413 for a slice over 16 384 bytes', () => {
    const { send } = setup();
    expect(statusOf(() => send({ seq: 1, state: 'x'.repeat(16_384) }))).toMatch(/^payload_too_large: the presence slice is too large/);
  });
});

describe('parsePresenceIntentRequest', () => {
  const good = { state: null, seq: 1, sentAtMs: 2, signature: '', authorProof: '' };
  it('refuses unknown and missing fields, naming them', () => {
    expect(statusOf(() => parsePresenceIntentRequest({ ...good, extra: 1 }))).toMatch(/unknown field body\.extra/);
    const { state: _s, ...noState } = good;
    expect(statusOf(() => parsePresenceIntentRequest(noState))).toMatch(/body\.state is required/);
  });
  it('keeps u64 values exact and refuses non-integers', () => {
    expect(parsePresenceIntentRequest({ ...good, seq: 18_446_744_073_709_551_615n }).seq).toBe(18_446_744_073_709_551_615n);
    expect(statusOf(() => parsePresenceIntentRequest({ ...good, seq: 18_446_744_073_709_551_616n }))).toMatch(/body\.seq must be an unsigned 64-bit integer/);
    expect(statusOf(() => parsePresenceIntentRequest({ ...good, sentAtMs: 1.5 }))).toMatch(/body\.sentAtMs/);
    expect(statusOf(() => parsePresenceIntentRequest({ ...good, seq: '1' }))).toMatch(/body\.seq/);
  });
});
