/**
 * TEE routes end to end (issue #15): on this machine, which has no TEE, `GET /tee/info` says so
 * truthfully and both attestations answer 501 naming why; a provider module plugged in through
 * `tee.provider` produces quotes whose report data binds the caller's nonce; a configured provider
 * that is missing leaves the node running and its refusals name the missing module. Info and attest
 * need no token; registration-attest does; `verify-quote` is not served. Driven through the SDK and
 * the CLI.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, HttpError, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import { domainHash } from '../../../src/crypto/ids.ts';
import { CliUser } from '../../helpers/cli.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { FAKE_TEE_MRTD, writeFakeTeeProvider } from '../../helpers/tee.ts';

const NONCE = 'ab'.repeat(32);

async function refusal(p: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HttpError) return { status: e.status, message: e.errorText ?? '' };
    throw e;
  }
  throw new Error('expected a refusal');
}

async function session(node: TestNode): Promise<Client> {
  const c = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await c.auth.login({ username: node.adminUser, password: node.adminPassword });
  return c;
}

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'hearth-tee-'));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

describe('a node without a TEE', { timeout: 120_000 }, () => {
  let node: TestNode;
  let c: Client;
  let anon: Client;
  beforeAll(async () => {
    node = await startTestNode();
    c = await session(node);
    anon = createClient({ baseUrl: node.url });
  });
  afterAll(() => node?.destroy());

  it('answers info truthfully, without a token: 501 naming why (TeeInfoResponseData carries no "none")', async () => {
    expect(await refusal(anon.tee.info())).toEqual({ status: 501, message: expect.stringMatching(/TEE information is unavailable: this machine has no TEE/) });
  });

  it('refuses attestation with 501 naming why, after validating the request', async () => {
    expect(await refusal(anon.tee.attest({ nonce: NONCE }))).toEqual({ status: 501, message: expect.stringMatching(/unavailable: this machine has no TEE/) });
    expect(await refusal(anon.tee.attest({ nonce: 'ab' }))).toMatchObject({ status: 400, message: expect.stringContaining('nonce') });
    expect(await refusal(c.tee.registrationAttest({ nonce: NONCE }))).toMatchObject({ status: 501 });
    expect(await refusal(anon.tee.registrationAttest({ nonce: NONCE }))).toMatchObject({ status: 401 });
  });

  it('does not serve the removed verify-quote route', async () => {
    expect(await refusal(c.http.data('/admin-api/tee/verify-quote', { method: 'POST', body: { quoteB64: 'AA==', nonce: NONCE } }))).toMatchObject({ status: 404 });
  });

  it('hearth tee info | attest say so on the command line', async () => {
    const user = await CliUser.create(node.url);
    try {
      const info = await user.run(['tee', 'info']);
      expect(info.code).toBe(1);
      expect(info.stderr).toContain('TEE information is unavailable: this machine has no TEE');
      const res = await user.run(['tee', 'attest', '--nonce', NONCE]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('TEE attestation is unavailable');
      expect(res.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await user.destroy();
    }
  });
});

describe('a node with a TEE provider plugged in', { timeout: 120_000 }, () => {
  let node: TestNode;
  let c: Client;
  beforeAll(async () => {
    const provider = await writeFakeTeeProvider(tmp);
    node = await startTestNode({ configure: (cfg) => void (cfg.tee.provider = provider) });
    c = await session(node);
  });
  afterAll(() => node?.destroy());

  it('reports the provider and binds the nonce, the node key and the collateral as asked', async () => {
    expect(await c.tee.info()).toEqual({ cloudProvider: 'test-cloud', osImage: 'test-image', mrtd: FAKE_TEE_MRTD });
    const me = await c.accounts.identity();

    const plain = await c.tee.attest({ nonce: NONCE });
    expect(plain.quote).toEqual({ body: { reportdata: NONCE + '00'.repeat(32) } });
    expect(Buffer.from(plain.quoteB64, 'base64').subarray(0, 6).toString()).toBe('QUOTE:');
    expect(plain.boundPublicKey).toBeUndefined();
    expect(plain.collateral).toBeUndefined();

    const bound = await c.tee.attest({ nonce: NONCE, bindNodeKey: true, includeCollateral: true });
    const binding = domainHash('hearth.tee.report.v1', [Buffer.alloc(0), Buffer.from(me.publicKey, 'hex')]).toString('hex');
    expect(bound).toMatchObject({ quote: { body: { reportdata: NONCE + binding } }, boundPublicKey: me.publicKey, collateral: { tcb: 'UpToDate' } });

    const reg = await c.tee.registrationAttest({ nonce: NONCE });
    const regBinding = domainHash('hearth.tee.registration.v1', [Buffer.from(me.accountId, 'hex'), Buffer.from(me.publicKey, 'hex')]).toString('hex');
    expect(reg.quote).toEqual({ body: { reportdata: NONCE + regBinding } });
  });

  it('refuses an unknown application (404) and a transport-key binding (409)', async () => {
    expect(await refusal(c.tee.attest({ nonce: NONCE, applicationId: '1'.repeat(64) }))).toMatchObject({ status: 404 });
    expect(await refusal(c.tee.attest({ nonce: NONCE, bindTransportKey: true }))).toMatchObject({ status: 409, message: expect.stringContaining('transport key') });
  });
});

describe('a node whose configured provider is missing', { timeout: 120_000 }, () => {
  it('starts, and names the missing provider in info and in the 501', async () => {
    const missing = join(tmp, 'no-such-provider.mjs');
    const node = await startTestNode({ configure: (cfg) => void (cfg.tee.provider = missing) });
    try {
      const c = createClient({ baseUrl: node.url });
      expect(await refusal(c.tee.info())).toEqual({ status: 501, message: expect.stringContaining(`${missing} could not be loaded`) });
      expect(await refusal(c.tee.attest({ nonce: NONCE }))).toEqual({ status: 501, message: expect.stringContaining(missing) });
    } finally {
      await node.destroy();
    }
  });
});
