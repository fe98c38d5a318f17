import { spawn } from 'node:child_process';
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ed25519Sign, ed25519Verify, generateKeyPair, privateKeyObject, publicKeyOf, rawPrivateSeed, rawPublicKeyBytes } from './keys.ts';

describe('ed25519Verify', () => {
  it('accepts the signer’s signature and refuses any other message, key or malformed input', () => {
    const a = generateKeyPair('ed25519');
    const b = generateKeyPair('ed25519');
    const msg = Buffer.from('a delta digest');
    const sig = Buffer.from(ed25519Sign(privateKeyObject(a.privateKey), msg), 'hex');
    for (let i = 0; i < 3; i++) expect(ed25519Verify(a.publicKey, msg, sig)).toBe(true); // also from the kept key
    expect(ed25519Verify(a.publicKey, Buffer.from('another'), sig)).toBe(false);
    expect(ed25519Verify(b.publicKey, msg, sig)).toBe(false);
    expect(ed25519Verify('zz'.repeat(32), msg, sig)).toBe(false);
    expect(ed25519Verify(a.publicKey.slice(2), msg, sig)).toBe(false);
    expect(ed25519Verify(a.publicKey, msg, sig.subarray(1))).toBe(false);
  });

  it('stays correct past the bound of kept keys', () => {
    const msg = Buffer.from('m');
    const pairs = Array.from({ length: 1100 }, () => generateKeyPair('ed25519'));
    const sigs = pairs.map((p) => Buffer.from(ed25519Sign(privateKeyObject(p.privateKey), msg), 'hex'));
    for (let i = 0; i < pairs.length; i++) expect(ed25519Verify(pairs[i]!.publicKey, msg, sigs[i]!)).toBe(true);
    // the first keys were evicted: imported again, still right
    expect(ed25519Verify(pairs[0]!.publicKey, msg, sigs[0]!)).toBe(true);
    expect(ed25519Verify(pairs[0]!.publicKey, msg, sigs[1]!)).toBe(false);
  });
});

describe('raw keys out of DER', () => {
  // a key not made by a key-generation job: its JWK export is safe to use as the oracle here
  const seed = Buffer.alloc(32, 7);
  const edPrivate = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
  const xPrivate = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });

  it('gives the 32-byte public key and seed that JWK names, for Ed25519 and X25519, private or public', () => {
    for (const key of [edPrivate, xPrivate]) {
      const jwk = key.export({ format: 'jwk' });
      expect(rawPublicKeyBytes(key).toString('base64url')).toBe(jwk.x);
      expect(rawPublicKeyBytes(createPublicKey(key)).toString('base64url')).toBe(jwk.x);
      expect(rawPrivateSeed(key)).toEqual(seed);
    }
    expect(publicKeyOf(edPrivate)).toBe(Buffer.from(edPrivate.export({ format: 'jwk' }).x as string, 'base64url').toString('hex'));
  });

  it('refuses other key types, and a seed of a public key', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(() => rawPublicKeyBytes(ec.publicKey)).toThrow(/not an Ed25519 or X25519 key/);
    expect(() => rawPrivateSeed(ec.privateKey)).toThrow(/not an Ed25519 or X25519 private key/);
    expect(() => rawPrivateSeed(createPublicKey(edPrivate))).toThrow(/not an Ed25519 or X25519 private key/);
  });

  it('no source file exports a key as JWK (the export that can freeze the thread on Node 20)', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const offenders: string[] = [];
    for (const dir of ['src', 'test', 'bench', 'scripts', 'web']) {
      const files = await readdir(join(root, dir), { recursive: true }).catch(() => [] as string[]);
      for (const f of files) {
        if (!f.endsWith('.ts') || f.includes('node_modules')) continue;
        const text = await readFile(join(root, dir, f), 'utf8');
        if (/\.export\(\s*\{\s*format:\s*'jwk'/.test(text) && !f.endsWith('keys.test.ts')) offenders.push(join(dir, f));
      }
    }
    expect(offenders).toEqual([]);
  });

  it('a process generating keys and sealing with a tiny young generation never freezes (it did with the JWK export)', async () => {
    // Many collections during the exports: with the JWK export this froze within 40–60 k rounds.
    // The child reports every 1,000 rounds; frozen means no report for 8 s, whatever the machine's load.
    const dist = (p: string) => pathToFileURL(join(fileURLToPath(new URL('../..', import.meta.url)), 'dist', p)).href;
    const script = `
      const { generateKeyPair } = await import(${JSON.stringify(dist('crypto/keys.js'))});
      const { sealToRoot } = await import(${JSON.stringify(dist('crypto/seal.js'))});
      const root = generateKeyPair('ed25519').publicKey;
      for (let i = 1; i <= 60000; i++) {
        generateKeyPair(i % 2 ? 'ed25519' : 'x25519');
        if (i % 4 === 0) sealToRoot({ accountId: 'a', rootPublicKey: root, rootEpoch: 0 }, new Uint8Array(8));
        if (i % 1000 === 0) process.stdout.write('.');
      }`;
    const child = spawn(process.execPath, ['--max-semi-space-size=1', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let rounds = 0;
    const ended = await new Promise<number | null | 'frozen'>((resolve) => {
      let stall = setTimeout(() => resolve('frozen'), 8_000);
      child.stdout.on('data', (d: Buffer) => {
        rounds += d.length * 1000;
        clearTimeout(stall);
        stall = setTimeout(() => resolve('frozen'), 8_000);
      });
      child.once('exit', (code) => {
        clearTimeout(stall);
        resolve(code);
      });
    });
    if (ended === 'frozen') child.kill('SIGKILL');
    expect({ ended, rounds }).toEqual({ ended: 0, rounds: 60_000 });
  }, 180_000);
});
