/**
 * The TEE service's bound on quotes in flight (issue #23 section 6): `POST /tee/attest` is public as
 * the reference routes it, so a caller without a token must not be able to queue unbounded work at
 * the TEE. Past the bound: 503 with Retry-After at once; a slot frees when a quote is done.
 */
import { describe, expect, it } from 'vitest';
import type { NodeIdentity } from '../identity/identity.ts';
import { HearthError } from '../errors.ts';
import type { TeeProvider } from './provider.ts';
import { TEE_MAX_QUOTES_IN_FLIGHT, TeeService } from './service.ts';

const NONCE = 'ab'.repeat(32);

function slowProvider() {
  const waiting: (() => void)[] = [];
  const provider: TeeProvider = {
    name: 'slow',
    info: async () => ({ cloudProvider: 'test', osImage: 'test', mrtd: '00' }),
    quote: (reportData) =>
      new Promise((resolve) => waiting.push(() => resolve({ quote: Buffer.concat([Buffer.from('Q:'), Buffer.from(reportData)]) }))),
  };
  return { provider, releaseAll: () => waiting.splice(0).forEach((f) => f()), pending: () => waiting.length };
}

describe('TeeService.attest', () => {
  it('produces at most TEE_MAX_QUOTES_IN_FLIGHT quotes at once; beyond, 503 with Retry-After at once', async () => {
    const slow = slowProvider();
    const tee = new TeeService({
      backend: { kind: 'ready', provider: slow.provider },
      identity: { publicKey: 'cd'.repeat(32), accountId: 'ef'.repeat(32) } as NodeIdentity,
      applications: { get: async () => null },
    });
    const first = Array.from({ length: TEE_MAX_QUOTES_IN_FLIGHT }, () => tee.attest({ nonce: NONCE }));
    await new Promise((r) => setImmediate(r));
    expect(slow.pending()).toBe(TEE_MAX_QUOTES_IN_FLIGHT);
    const refused = await tee.attest({ nonce: NONCE }).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(HearthError);
    expect((refused as HearthError).kind).toBe('unavailable');
    expect((refused as HearthError).extra.retryAfterSecs).toBe(1);
    expect(slow.pending()).toBe(TEE_MAX_QUOTES_IN_FLIGHT); // the refused one never reached the TEE
    slow.releaseAll();
    for (const q of await Promise.all(first)) expect(Buffer.from(q.quoteB64, 'base64').subarray(0, 2).toString()).toBe('Q:');
    const again = tee.attest({ nonce: NONCE });
    await new Promise((r) => setImmediate(r));
    slow.releaseAll();
    await expect(again).resolves.toHaveProperty('quoteB64');
  });
});
