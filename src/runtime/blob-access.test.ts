import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobService } from '../blobs/service.ts';
import { BlobStore } from '../blobs/store.ts';
import { MemoryStore } from '../store/memory.ts';
import { blobAccess } from './blob-access.ts';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest();
const CTX = new Uint8Array(32).fill(0xc0);

let dir: string;
let kv: MemoryStore;
let service: BlobService;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-rt-blobs-'));
  kv = new MemoryStore();
  await kv.open();
  const store = new BlobStore(kv, dir);
  await store.open();
  service = new BlobService({
    store,
    peers: {
      fetch: async (blobId) =>
        blobId === sha(sha(Buffer.from('from a peer'))).toString('hex')
          ? (async function* () {
              yield Buffer.from('from a peer');
            })()
          : null,
    },
  });
});
afterEach(async () => {
  await kv.close();
  await rm(dir, { recursive: true, force: true });
});

async function readAll(it: AsyncIterable<Uint8Array>) {
  const parts: Uint8Array[] = [];
  for await (const p of it) parts.push(p);
  return Buffer.concat(parts).toString();
}

describe('blobAccess over BlobService', () => {
  it('puts bytes as a content-addressed blob and reads them back', async () => {
    const access = blobAccess(service);
    const id = await access.put(Buffer.from('guest data'));
    // a one-chunk blob's id is sha256 of its chunk id (runtime.md §1 "Bytecode blob id")
    expect(Buffer.from(id).toString('hex')).toBe(sha(sha(Buffer.from('guest data'))).toString('hex'));
    expect(await access.has(id)).toBe(true);
    expect(await readAll((await access.open(id))!)).toBe('guest data');
  });

  it('answers null / false for a blob the node does not hold, and asks peers only with a context', async () => {
    const access = blobAccess(service);
    const missing = new Uint8Array(32).fill(9);
    expect(await access.open(missing)).toBeNull();
    expect(await access.open(missing, CTX)).toBeNull();
    expect(await access.has(missing)).toBe(false);
    const onPeer = sha(sha(Buffer.from('from a peer')));
    expect(await access.open(onPeer)).toBeNull();
    expect(await readAll((await access.open(onPeer, CTX))!)).toBe('from a peer');
    expect(await access.has(onPeer)).toBe(true);
  });
});
