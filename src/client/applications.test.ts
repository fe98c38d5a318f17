/**
 * ApplicationsApi decoding: which answers are unwrapped from `{data}` and which are read flat
 * (admin-wire-a §3.1), the request bodies, and that a wrong shape is a DecodeError.
 */
import { describe, expect, it } from 'vitest';
import { DecodeError } from './errors.ts';
import { fakeFetch, json } from './fake-fetch.ts';
import { ApplicationsApi, createClient } from './index.ts';

const APP = 'ab'.repeat(32);
const row = { id: APP, blob: { bytecode: 'cd'.repeat(32), compiled: '00'.repeat(32) }, size: 10, source: 'file:///x.mpk', metadata: [123, 125], package: 'p.q', version: '1.0.0' };

describe('ApplicationsApi', () => {
  it('is on createClient and sends the documented bodies', async () => {
    const fake = fakeFetch({
      'POST /admin-api/install-application': () => json({ data: { applicationId: APP } }),
      'POST /admin-api/install-dev-application': () => json({ data: { applicationId: APP } }),
      [`DELETE /admin-api/applications/${APP}`]: () => json({ data: { applicationId: APP } }),
    });
    const node = createClient({ baseUrl: 'http://node.test', fetch: fake.fetch });
    expect(node.applications).toBeInstanceOf(ApplicationsApi);
    expect(await node.applications.install('p.q', '1.0.0')).toEqual({ applicationId: APP });
    expect(fake.requests[0].body).toEqual({ package: 'p.q', version: '1.0.0' });
    expect(await node.applications.installDev('/x.mpk')).toEqual({ applicationId: APP });
    expect(fake.requests[1].body).toEqual({ path: '/x.mpk' });
    expect(await node.applications.uninstall(APP)).toEqual({ applicationId: APP });
  });

  it('unwraps list, get, versions and ABI; reads packages, versions and latest flat', async () => {
    const fake = fakeFetch({
      'GET /admin-api/applications': () => json({ data: { apps: [row] } }),
      [`GET /admin-api/applications/${APP}`]: () => json({ data: { application: row } }),
      [`GET /admin-api/applications/${APP}/versions`]: () => json({ data: [{ version: '1.0.0', blobId: APP, size: 10, package: 'p.q' }] }),
      [`GET /admin-api/applications/${APP}/abi`]: (req) => json({ data: req.url.includes('service_name=none') ? null : { schema_version: 'wasm-abi/1' } }),
      'GET /admin-api/packages': () => json({ packages: ['p.q'] }),
      'GET /admin-api/packages/p.q/versions': () => json({ versions: ['1.0.0'] }),
      'GET /admin-api/packages/p.q/latest': () => json({ applicationId: APP, version: '1.0.0' }),
      'GET /admin-api/packages/p.r/latest': () => json({ applicationId: null, version: null }),
    });
    const apps = createClient({ baseUrl: 'http://node.test', fetch: fake.fetch }).applications;
    expect(await apps.list()).toEqual([row]);
    expect(await apps.get(APP)).toEqual(row);
    expect(await apps.versions(APP)).toHaveLength(1);
    expect(await apps.abi(APP)).toEqual({ schema_version: 'wasm-abi/1' });
    expect(await apps.abi(APP, { serviceName: 'none' })).toBeNull();
    expect(fake.requests.at(-1)!.url).toContain('?service_name=none');
    expect(await apps.packages()).toEqual(['p.q']);
    expect(await apps.packageVersions('p.q')).toEqual(['1.0.0']);
    expect(await apps.latest('p.q')).toEqual({ applicationId: APP, version: '1.0.0' });
    expect(await apps.latest('p.r')).toEqual({ applicationId: null, version: null });
  });

  it('throws DecodeError when a flat route answers enveloped, or the reverse', async () => {
    const fake = fakeFetch({
      'GET /admin-api/packages/p.q/latest': () => json({ data: { applicationId: APP, version: '1.0.0' } }),
      'GET /admin-api/packages': () => json({ data: { packages: [] } }),
      'GET /admin-api/applications': () => json({ apps: [] }),
    });
    const apps = createClient({ baseUrl: 'http://node.test', fetch: fake.fetch }).applications;
    await expect(apps.latest('p.q')).rejects.toBeInstanceOf(DecodeError);
    await expect(apps.packages()).rejects.toBeInstanceOf(DecodeError);
    await expect(apps.list()).rejects.toBeInstanceOf(DecodeError);
  });

  it('passes the caller signal to installs', async () => {
    const fake = fakeFetch({ 'POST /admin-api/install-application': () => json({ data: { applicationId: APP } }) });
    const apps = createClient({ baseUrl: 'http://node.test', fetch: fake.fetch }).applications;
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    await expect(apps.install('p.q', '1.0.0', { signal: ac.signal })).rejects.toThrow();
  });
});
