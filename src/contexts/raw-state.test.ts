/**
 * The raw state rows (raw-state.ts, raw-state-routes.ts) over a MemoryStore holding two contexts:
 * key order is the guest's byte order, paging visits every row once, a context never sees another's
 * rows nor its own private state or index, previews are text or hex as the bytes are, the bounds
 * hold, and hostile query parameters are 400s naming the parameter.
 */
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../auth/service.ts';
import { HearthError } from '../errors.ts';
import { buildApp, type App } from '../http/app.ts';
import { MAX_LIMIT, MAX_VALUE_BYTES, PAGE_KEY_BYTES, PREVIEW_BYTES, preview } from './raw-state.ts';
import { registerContextRoutes } from './routes.ts';
import { world, type World } from './testkit.ts';

const owner: Principal = { keyId: 'k', keyType: 'root', rootKeyId: 'k', permissions: ['admin'], binding: { contexts: [], groups: [], applications: [] } };
const enc = (s: string) => new TextEncoder().encode(s);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

let w: World;
let a: string;
let b: string;
/** context a's rows as written: hex key → value */
const rowsOfA = new Map<string, Uint8Array>();

async function created(): Promise<string> {
  return (await w.contexts.create({ groupId: w.namespaceId, initializationParams: new Uint8Array() })).contextId;
}

async function write(contextId: string, space: 'state' | 'private' | 'index', rows: [Uint8Array, Uint8Array][]) {
  await w.store.batch(w.records.writeOps(space, contextId, rows));
}

beforeAll(async () => {
  w = await world();
  a = await created();
  b = await created();
  // keys of several lengths and first bytes, so hex order must match byte order across lengths
  const rows: [Uint8Array, Uint8Array][] = [];
  for (let i = 0; i < 1234; i++) {
    const len = 1 + (i % 5);
    const key = Uint8Array.from({ length: len }, (_, j) => (i * 37 + j * 101) % 256);
    rows.push([key, enc(`value-${i}`)]);
  }
  rows.push([new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), Uint8Array.from([0, 1, 2, 0xfe])]);
  await write(a, 'state', rows);
  for (const [k, v] of rows) rowsOfA.set(hex(k), v);
  // the init's own rows (the fake runtime's root key) are state rows too
  for await (const [k, v] of w.records.stateEntries(a)) rowsOfA.set(k, v);
  await write(b, 'state', [[enc('only-b'), enc('b-value')]]);
  await write(a, 'private', [[enc('secret'), enc('private-value')]]);
  await write(a, 'index', [[enc('idx'), enc('index-value')]]);
});

async function all(contextId: string, limit: number) {
  const keys: string[] = [];
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await w.rawState.page(contextId, { after, limit });
    pages++;
    expect(page.entries.length).toBeLessThanOrEqual(limit);
    keys.push(...page.entries.map((e) => e.key));
    if (page.next === null) break;
    expect(page.next).toBe(page.entries[page.entries.length - 1].key);
    after = page.next;
  }
  return { keys, pages };
}

describe('raw state rows', () => {
  it('pages through every row of the context once, in byte order of the keys', async () => {
    const { keys, pages } = await all(a, 97);
    const expected = [...rowsOfA.keys()].sort((x, y) => Buffer.compare(Buffer.from(x, 'hex'), Buffer.from(y, 'hex')));
    expect(keys).toEqual(expected);
    expect(new Set(keys).size).toBe(keys.length);
    expect(pages).toBe(Math.ceil(expected.length / 97));
    // sizes are the values' bytes
    const page = await w.rawState.page(a, { limit: 5 });
    for (const e of page.entries) expect(e.size).toBe(rowsOfA.get(e.key)!.length);
  });

  it('never shows another context’s rows, nor private state or the index', async () => {
    const { keys } = await all(b, 100);
    expect(keys).toContain(hex(enc('only-b')));
    // b holds its own row and the row its init wrote (the fake guest's root key), nothing of a's 1,235
    expect(keys).toHaveLength(2);
    expect(keys.filter((k) => rowsOfA.has(k))).toHaveLength(1);
    const ofA = (await all(a, MAX_LIMIT)).keys;
    expect(ofA).not.toContain(hex(enc('only-b')));
    expect(ofA).not.toContain(hex(enc('secret')));
    expect(ofA).not.toContain(hex(enc('idx')));
  });

  it('ends a page exactly at the last row (next null) and answers an empty page after it', async () => {
    const last = [...rowsOfA.keys()].sort().at(-1)!;
    expect(await w.rawState.page(a, { after: last })).toEqual({ entries: [], next: null });
    const total = rowsOfA.size;
    const exact = await w.rawState.page(b, { limit: 2 });
    expect(exact.next).toBeNull();
    const { pages } = await all(a, Math.ceil(total / 3));
    expect(pages).toBe(3);
  });

  it('previews printable UTF-8 as text and other bytes as hex, bounded', () => {
    expect(preview(enc('hello world'))).toEqual({ preview: 'hello world', previewEncoding: 'utf8' });
    expect(preview(enc('héllo ✓'))).toEqual({ preview: 'héllo ✓', previewEncoding: 'utf8' });
    expect(preview(Uint8Array.from([0, 1, 2, 0xfe]))).toEqual({ preview: '000102fe', previewEncoding: 'hex' });
    expect(preview(enc('a\u0001b'))).toEqual({ preview: '610162', previewEncoding: 'hex' });
    expect(preview(Uint8Array.from([0xc3]))).toEqual({ preview: 'c3', previewEncoding: 'hex' });
    expect(preview(new Uint8Array())).toEqual({ preview: '', previewEncoding: 'utf8' });
    const long = preview(enc('x'.repeat(10_000)));
    expect(long).toEqual({ preview: 'x'.repeat(PREVIEW_BYTES), previewEncoding: 'utf8' });
    // a character cut at the preview's end: the text stops before it
    const cut = preview(enc(`${'x'.repeat(PREVIEW_BYTES - 1)}✓✓`));
    expect(cut).toEqual({ preview: 'x'.repeat(PREVIEW_BYTES - 1), previewEncoding: 'utf8' });
    const bin = preview(new Uint8Array(1000).fill(0x80));
    expect(bin.previewEncoding).toBe('hex');
    expect(bin.preview).toHaveLength(PREVIEW_BYTES * 2);
  });

  it('answers a row’s value in base64, cut at 1 MiB with truncated and the full size', async () => {
    const key = enc('big');
    const big = new Uint8Array(MAX_VALUE_BYTES + 10).map((_, i) => i % 251);
    await write(b, 'state', [[key, big]]);
    const v = await w.rawState.value(b, hex(key));
    expect(v).toMatchObject({ key: hex(key), size: big.length, encoding: 'base64', truncated: true });
    expect(Buffer.compare(Buffer.from(v.value, 'base64'), Buffer.from(big.subarray(0, MAX_VALUE_BYTES)))).toBe(0);
    expect(Buffer.compare(Buffer.from(v.value, 'base64'), Buffer.from(big))).not.toBe(0);
    const small = await w.rawState.value(b, hex(enc('only-b')));
    expect(small).toEqual({ key: hex(enc('only-b')), size: 7, encoding: 'base64', value: Buffer.from('b-value').toString('base64'), truncated: false });
    const page = await w.rawState.page(b, {});
    expect(page.entries.find((e) => e.key === hex(key))?.size).toBe(big.length);
  });

  it('ends a page early once its keys pass the bound, and still pages through every row', async () => {
    const c = await created();
    const big = (fill: number) => new Uint8Array(PAGE_KEY_BYTES / 2 + 1).fill(fill);
    await write(c, 'state', [1, 2, 3, 4].map((n) => [big(n), enc(`v${n}`)] as [Uint8Array, Uint8Array]));
    const first = await w.rawState.page(c, { limit: MAX_LIMIT });
    // two keys pass 1 MiB: the page stops there
    expect(first.entries).toHaveLength(2);
    expect(first.next).toBe(first.entries[1].key);
    const { keys } = await all(c, MAX_LIMIT);
    expect(keys.filter((k) => k.length > 1000)).toHaveLength(4);
  });

  it('is 404 for a context not held here, and for a key the context does not have (even one another context has)', async () => {
    const kind = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof HearthError ? e.kind : String(e)));
    expect(await kind(w.rawState.page('cd'.repeat(32)))).toBe('not_found');
    expect(await kind(w.rawState.value('cd'.repeat(32), '00'))).toBe('not_found');
    expect(await kind(w.rawState.value(a, hex(enc('only-b'))))).toBe('not_found');
    expect(await kind(w.rawState.value(a, hex(enc('secret'))))).toBe('not_found');
  });
});

describe('raw state routes', () => {
  let app: App;
  beforeAll(async () => {
    app = await buildApp({
      logger: pino({ level: 'silent' }),
      routes: (x) => {
        x.addHook('onRequest', async (req) => {
          req.principal = owner;
        });
        registerContextRoutes(x, w);
      },
    });
  });
  const get = (url: string) => app.inject({ url });

  it('answers a page and a value in the documented envelope', async () => {
    const res = await get(`/admin-api/contexts/${b}/raw-state?limit=1`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['data']);
    expect(body.data.entries).toHaveLength(1);
    expect(Object.keys(body.data.entries[0]).sort()).toEqual(['key', 'preview', 'previewEncoding', 'size']);
    const next = await get(`/admin-api/contexts/${b}/raw-state?after=${body.data.next.toUpperCase()}&limit=500`);
    expect(next.json().data.entries[0].key > body.data.next).toBe(true);
    const value = await get(`/admin-api/contexts/${b}/raw-state/value?key=${hex(enc('only-b'))}`);
    expect(value.json().data).toMatchObject({ size: 7, truncated: false, encoding: 'base64' });
  });

  it('refuses malformed parameters with a 400 naming them, and unknown contexts or keys with 404', async () => {
    const cases: [string, number, RegExp][] = [
      [`/admin-api/contexts/${a}/raw-state?after=abc`, 400, /after/],
      [`/admin-api/contexts/${a}/raw-state?after=zz`, 400, /after/],
      [`/admin-api/contexts/${a}/raw-state?after=%00`, 400, /after/],
      [`/admin-api/contexts/${a}/raw-state?limit=0`, 400, /limit/],
      [`/admin-api/contexts/${a}/raw-state?limit=501`, 400, /limit/],
      [`/admin-api/contexts/${a}/raw-state?limit=-1`, 400, /limit/],
      [`/admin-api/contexts/${a}/raw-state?limit=1e3`, 400, /limit/],
      [`/admin-api/contexts/${a}/raw-state?limit=99999999999999999999`, 400, /limit/],
      [`/admin-api/contexts/${a}/raw-state?limit=1&limit=2`, 400, /limit/],
      [`/admin-api/contexts/${a}/raw-state?after=00&after=01`, 400, /after/],
      [`/admin-api/contexts/not-an-id/raw-state`, 400, /context id/],
      [`/admin-api/contexts/${'cd'.repeat(32)}/raw-state`, 404, /Context not found/],
      [`/admin-api/contexts/${a}/raw-state/value`, 400, /key/],
      [`/admin-api/contexts/${a}/raw-state/value?key=x`, 400, /key/],
      [`/admin-api/contexts/${a}/raw-state/value?key=${'g'.repeat(64)}`, 400, /key/],
      [`/admin-api/contexts/${a}/raw-state/value?key=0011`, 404, /No state row/],
      [`/admin-api/contexts/${'cd'.repeat(32)}/raw-state/value?key=00`, 404, /Context not found/],
    ];
    for (const [url, status, message] of cases) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(status);
      expect(res.json().error, url).toMatch(message);
    }
  });
});
