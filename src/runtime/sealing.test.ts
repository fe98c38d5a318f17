/**
 * `seal_to` and `open_sealed` run for real: the `hostcalls` test app calls them through the worker
 * pool, with the node's own identity ({@link NodeIdentity} over a memory store) as the key holder.
 * Covers the success paths, the round trip, the envelope layout, and every refusal: an unusable or
 * wrongly sized key, another account's envelope, a short or altered envelope, an executor the node
 * holds no root for, and a runtime given no sealing access.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/helpers/wasm-apps.ts';
import { NodeIdentity } from '../identity/identity.ts';
import { MemoryStore } from '../store/memory.ts';
import type { CallFailure, CallRequest, CallResult } from './call-types.ts';
import { WasmRuntime } from './runtime.ts';
import { identitySealing, MIN_ENVELOPE_BYTES, parseEnvelope, sealEnvelope } from './sealing.ts';
import { bytes, newViews, output, request } from './test-support.ts';

let wasm: Uint8Array;
let rt: WasmRuntime;
let noSealing: WasmRuntime;
let identity: NodeIdentity;
let other: NodeIdentity;

const ownAccount = () => Buffer.from(identity.accountId, 'hex');

beforeAll(async () => {
  wasm = await buildTestApp('hostcalls');
  identity = await NodeIdentity.load(new MemoryStore(), generateKeyPairSync('ed25519').privateKey, 1);
  other = await NodeIdentity.load(new MemoryStore(), generateKeyPairSync('ed25519').privateKey, 1);
  rt = new WasmRuntime({ poolSize: 1, sealing: identitySealing(identity) });
  noSealing = new WasmRuntime({ poolSize: 1 });
  await Promise.all([rt.start(), noSealing.start()]);
}, 240_000);

afterAll(async () => {
  await Promise.all([rt?.stop(), noSealing?.stop()]);
});

function call(runtime: WasmRuntime, method: string, args: unknown, extra: Partial<CallRequest> = {}): Promise<CallResult> {
  return runtime.call(request('ab'.repeat(32), wasm, method, args, newViews(), { executorId: ownAccount(), ...extra }));
}
async function ok(method: string, args: unknown, extra: Partial<CallRequest> = {}, runtime = rt) {
  const r = await call(runtime, method, args, extra);
  expect(r).toMatchObject({ ok: true });
  return output(r) as Record<string, unknown>;
}
async function fails(method: string, args: unknown, extra: Partial<CallRequest> = {}, runtime = rt): Promise<CallFailure> {
  const r = await call(runtime, method, args, extra);
  expect(r.ok).toBe(false);
  return r as CallFailure;
}
const seal = async (key: string, text: string) => (await ok('seal', { key, text })) as { sealed: number; envelope: string | null };

describe('seal_to', () => {
  it('puts the envelope in the register: ephemeral key 32 ‖ nonce 12 ‖ ciphertext and tag', async () => {
    const r = await seal(identity.rootPublicKey, 'queen of hearts');
    expect(r.sealed).toBe(1);
    const env = Buffer.from(r.envelope!, 'hex');
    expect(env.length).toBe(32 + 12 + 'queen of hearts'.length + 16);
    expect(env.includes(Buffer.from('queen of hearts'))).toBe(false);
    // a fresh ephemeral key and nonce each time
    const again = await seal(identity.rootPublicKey, 'queen of hearts');
    expect(again.envelope!.slice(0, 88)).not.toBe(r.envelope!.slice(0, 88));
  });

  it('seals in a read-only call too (sealing reveals nothing)', async () => {
    expect((await ok('seal', { key: identity.rootPublicKey, text: 'x' }, { readOnly: true })).sealed).toBe(1);
  });

  it('answers 0 for a key that is not a usable Ed25519 point', async () => {
    // y = 1 is the identity point, y = 0 a point of order 4 (both small order), y = 2 no point at all
    expect(await seal('01' + '00'.repeat(31), 'x')).toEqual({ sealed: 0, envelope: null });
    expect(await seal('00'.repeat(32), 'x')).toEqual({ sealed: 0, envelope: null });
    expect(await seal('02' + '00'.repeat(31), 'x')).toEqual({ sealed: 0, envelope: null });
    expect(sealEnvelope(Buffer.from('02' + '00'.repeat(31), 'hex'), Buffer.from('x'))).toBeNull();
  });

  it('traps invalid memory access for a key that is not 32 bytes', async () => {
    expect((await fails('seal', { key: identity.rootPublicKey.slice(2), text: 'x' })).message).toBe('invalid memory access');
    expect((await fails('seal', { key: identity.rootPublicKey + '00', text: 'x' })).message).toBe('invalid memory access');
  });
});

describe('open_sealed', () => {
  it('round trip: what is sealed to this node’s account root opens in a run it executes', async () => {
    const { envelope } = await seal(identity.rootPublicKey, 'ace of spades');
    expect(await ok('open', { envelope })).toEqual({ opened: 1, text: 'ace of spades' });
    expect(await ok('seal_open', { key: identity.rootPublicKey, text: 'both in one call' })).toEqual({ opened: 1, text: 'both in one call' });
  });

  it('answers 0, indistinguishably, for another account’s envelope, a short one and an altered one', async () => {
    const foreign = (await seal(other.rootPublicKey, 'not yours')).envelope!;
    expect(await ok('open', { envelope: foreign })).toEqual({ opened: 0, text: null });
    const mine = (await seal(identity.rootPublicKey, 'mine')).envelope!;
    expect(await ok('open', { envelope: mine.slice(0, 40) })).toEqual({ opened: 0, text: null });
    expect(await ok('open', { envelope: mine.slice(0, (MIN_ENVELOPE_BYTES - 1) * 2) })).toEqual({ opened: 0, text: null });
    for (const at of [0, 40, mine.length - 2]) {
      const flipped = mine.slice(0, at) + (parseInt(mine.slice(at, at + 2), 16) ^ 1).toString(16).padStart(2, '0') + mine.slice(at + 2);
      expect(await ok('open', { envelope: flipped })).toEqual({ opened: 0, text: null });
    }
  });

  it('traps as TEE-only when the node holds no root for the run’s executor', async () => {
    const { envelope } = await seal(identity.rootPublicKey, 'x');
    const f = await fails('open', { envelope }, { executorId: bytes(32, 0xa1) });
    expect(f.message).toBe('open_sealed is only available in a TEE-triggered execution');
    // the missing key is reported before the envelope is judged, as the reference checks the opener first
    expect((await fails('open', { envelope: '00' }, { executorId: bytes(32, 0xa1) })).message).toBe('open_sealed is only available in a TEE-triggered execution');
  });

  it('traps as TEE-only on a runtime given no sealing access; seal_to still works there', async () => {
    const { envelope } = await seal(identity.rootPublicKey, 'x');
    expect((await fails('open', { envelope }, {}, noSealing)).message).toBe('open_sealed is only available in a TEE-triggered execution');
    expect((await ok('seal', { key: identity.rootPublicKey, text: 'x' }, {}, noSealing)).sealed).toBe(1);
  });
});

describe('identitySealing', () => {
  it('opens with NodeIdentity’s root only for its own account; parseEnvelope refuses short bytes', async () => {
    const env = sealEnvelope(Buffer.from(identity.rootPublicKey, 'hex'), Buffer.from('direct'))!;
    const access = identitySealing(identity);
    const opened = await access.open(ownAccount(), env);
    expect(opened.opened && Buffer.from(opened.opened).toString()).toBe('direct');
    expect(await access.open(Buffer.from(other.accountId, 'hex'), env)).toEqual({ opened: null, reason: 'no-key' });
    expect(await identitySealing(other).open(Buffer.from(other.accountId, 'hex'), env)).toEqual({ opened: null, reason: 'refused' });
    expect(parseEnvelope(env.subarray(0, MIN_ENVELOPE_BYTES - 1))).toBeNull();
  });
});
