import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeFetch, json } from './fake-fetch.ts';
import { AdminApi, AuthApi, createClient, HttpClient, MemoryTokenStore } from './index.ts';

describe('createClient', () => {
  it('wires auth, admin and http around one token store', async () => {
    const fake = fakeFetch({ 'GET /admin-api/health': () => json({ data: { status: 'alive' } }) });
    const node = createClient({ baseUrl: 'http://node.test:2428/', fetch: fake.fetch });
    expect(node.auth).toBeInstanceOf(AuthApi);
    expect(node.admin).toBeInstanceOf(AdminApi);
    expect(node.http).toBeInstanceOf(HttpClient);
    expect(node.tokenStore).toBeInstanceOf(MemoryTokenStore);
    expect(node.http.baseUrl).toBe('http://node.test:2428');
    await node.admin.health();
    expect(fake.requests[0].url).toBe('http://node.test:2428/admin-api/health');
  });

  it('rejects an invalid base URL up front', () => {
    expect(() => createClient({ baseUrl: 'localhost:2428', fetch: fakeFetch().fetch })).toThrow(/http\(s\) URL/);
    expect(() => createClient({ baseUrl: 'not a url', fetch: fakeFetch().fetch })).toThrow(TypeError);
  });
});

describe('browser compatibility', () => {
  // the SDK's own modules, the wire vocabulary, and the codec modules they import (the package
  // ships those; src/codec/borsh.ts is the node's and may use Buffer)
  const src = join(import.meta.dirname, '..');
  const own = ['client', 'wire'].flatMap((dir) => readdirSync(join(src, dir)).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).map((f) => `${dir}/${f}`));
  const codec = new Set(own.flatMap((file) => [...readFileSync(join(src, file), 'utf8').matchAll(/from '\.\.\/codec\/([\w-]+\.ts)'/g)].map((m) => `codec/${m[1]}`)));
  const sources = [...own, ...codec, 'abort.ts'];

  it('sees the codec modules the SDK imports', () => {
    expect(sources).toContain('codec/json.ts');
  });

  it.each(sources)('%s uses no Node-only APIs', (file) => {
    const text = readFileSync(join(src, file), 'utf8');
    expect(text).not.toMatch(/from ['"]node:|require\(|\bBuffer\b|\bprocess\./);
  });
});
