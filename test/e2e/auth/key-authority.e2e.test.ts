/**
 * Who may revoke, edit or replace a root key (issue #23 section 2; docs/security.md "Who may change
 * a root key"). The node's owner is `dev` (the provisioned admin); `ops` is a second root admin key;
 * the attacker holds an unbound `admin` client key (minted by `ops`), or `ops` itself.
 *
 * First the sequences that once ended with user `dev` accepting only the attacker's password, each
 * refused at its first step; then a second admin user's attempts on the owner and on a third user
 * (issue #37 item 2); then the matrix: root admin / admin client key / scoped client key ×
 * every key route, against the targets that matter (the owner, the caller's own root, an admin root,
 * a narrow root, a client key), each cell with the answer it must give. Last, ownership moves by
 * `hearth key transfer-owner` on the stopped node's home, and only so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createClient, HttpError, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import { runCli, startTestNode, type TestNode } from '../../helpers/node.ts';

let node: TestNode;
let owner: Client;
let ownerId: string;
let opsId: string;
const tokens = {} as Record<'owner' | 'rootAdmin' | 'adminClient' | 'scopedClient', string>;
const subOf = (jwt: string): string => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).sub;

async function login(username: string, password: string): Promise<{ client: Client; token: string }> {
  const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  const { accessToken } = await client.auth.login({ username, password });
  return { client, token: accessToken };
}

/** One request with a token; answers the status and X-Auth-Error. */
async function call(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; reason: string | null; text: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(node.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
  return { status: res.status, reason: res.headers.get('x-auth-error'), text: await res.text() };
}

/** The status an SDK call was answered with. */
const statusOf = (p: Promise<unknown>): Promise<number> => p.then(() => 200, (e: unknown) => (e instanceof HttpError ? e.status : Promise.reject(e)));

const rootKeyBody = (username: string, password: string) => ({ public_key: username, auth_method: 'user_password', provider_data: { username, password } });
let fresh = 0;

/** A new root key made by the owner (holding `admin`, or narrowed to `perms`); answers its id. */
async function freshRoot(perms?: string[]): Promise<string> {
  const name = `victim${++fresh}`;
  await owner.auth.createRootKey(rootKeyBody(name, `${name}-password`));
  const id = subOf((await login(name, `${name}-password`)).token);
  if (perms) await owner.auth.updateKeyPermissions(id, { add: perms, remove: ['admin'] });
  return id;
}

/** A new client key of `ops` holding `context:list`; answers its id. */
async function freshClient(): Promise<string> {
  const res = await call(tokens.rootAdmin, 'POST', '/admin/client-key', { permissions: ['context:list'] });
  expect(res.status).toBe(200);
  return subOf(JSON.parse(res.text).data.access_token);
}

beforeAll(async () => {
  node = await startTestNode();
  const o = await login(node.adminUser, node.adminPassword);
  owner = o.client;
  tokens.owner = o.token;
  ownerId = subOf(o.token);
  await owner.auth.createRootKey(rootKeyBody('ops', 'ops-password'));
  tokens.rootAdmin = (await login('ops', 'ops-password')).token;
  opsId = subOf(tokens.rootAdmin);
  const mint = async (permissions: string[]) => JSON.parse((await call(tokens.rootAdmin, 'POST', '/admin/client-key', { permissions })).text).data.access_token as string;
  tokens.adminClient = await mint(['admin']);
  tokens.scopedClient = await mint(['context:list']);
}, 60_000);
afterAll(async () => node?.destroy());

describe('the takeover of user dev', () => {
  it('an admin client key revoking or narrowing the owner’s root key is refused at the first step', async () => {
    for (const [method, path, body] of [
      ['POST', '/admin/revoke', { client_id: ownerId }],
      ['DELETE', `/admin/keys/${ownerId}`, undefined],
      ['PUT', `/admin/keys/${ownerId}/permissions`, { add: ['context:list'], remove: ['admin'] }],
    ] as const) {
      const res = await call(tokens.adminClient, method, path, body);
      expect({ path, method, status: res.status, reason: res.reason }).toEqual({ path, method, status: 403, reason: 'permission_denied' });
    }
    expect(await owner.auth.getKeyPermissions(ownerId)).toMatchObject({ permissions: ['admin'] });
    await expect(login(node.adminUser, node.adminPassword)).resolves.toBeTruthy();
  });

  it('a second credential for user dev with the attacker’s password is refused, from another root admin key and from a client key; dev does not accept it', async () => {
    for (const token of [tokens.rootAdmin, tokens.adminClient]) {
      const res = await call(token, 'POST', '/admin/keys', rootKeyBody(node.adminUser, 'attacker-password'));
      expect(res.status).toBe(403);
    }
    await expect(login(node.adminUser, 'attacker-password')).rejects.toThrow();
    // the answer does not tell whether a password is dev's either
    expect((await call(tokens.rootAdmin, 'POST', '/admin/keys', rootKeyBody(node.adminUser, node.adminPassword))).status).toBe(403);
    // the owner may add one for dev (its own authority), and ops for ops
    expect((await call(tokens.owner, 'POST', '/admin/keys', rootKeyBody(node.adminUser, 'second-dev-password'))).status).toBe(200);
    await expect(login(node.adminUser, 'second-dev-password')).resolves.toBeTruthy();
  });
});

// issue #37 item 2: u2 revoked the owner's key, re-created `dev` with its own password, and then
// (the owner having fallen back to u2) added a credential to the still-active u3
describe('a second admin user', () => {
  let u2: Client;
  let u3Id: string;
  beforeAll(async () => {
    await owner.auth.createRootKey(rootKeyBody('u2', 'u2-password'));
    await owner.auth.createRootKey(rootKeyBody('u3', 'u3-password'));
    u2 = (await login('u2', 'u2-password')).client;
    u3Id = subOf((await login('u3', 'u3-password')).token);
  }, 60_000);

  it('cannot revoke, delete or narrow the owner’s key, nor log in as the owner or an active user with a password it chose', async () => {
    expect(await statusOf(u2.auth.revoke(ownerId))).toBe(403);
    expect(await statusOf(u2.auth.deleteRootKey(ownerId))).toBe(403);
    expect(await statusOf(u2.auth.updateKeyPermissions(ownerId, { add: ['context:list'], remove: ['admin'] }))).toBe(403);
    expect(await statusOf(u2.auth.createRootKey(rootKeyBody(node.adminUser, 'u2-chosen-password')))).toBe(403);
    expect(await statusOf(u2.auth.createRootKey(rootKeyBody('u3', 'u2-chosen-password')))).toBe(403);
    await expect(login(node.adminUser, 'u2-chosen-password')).rejects.toThrow();
    await expect(login('u3', 'u2-chosen-password')).rejects.toThrow();
    await expect(login(node.adminUser, node.adminPassword)).resolves.toBeTruthy();
    expect(await owner.auth.getKeyPermissions(ownerId)).toMatchObject({ permissions: ['admin'] });
  });

  it('may revoke another user, but a revoked username stays that user’s: only the owner re-creates it', async () => {
    await u2.auth.revoke(u3Id);
    expect(await statusOf(u2.auth.createRootKey(rootKeyBody('u3', 'u2-chosen-password')))).toBe(403);
    await expect(login('u3', 'u2-chosen-password')).rejects.toThrow();
    expect(await owner.auth.createRootKey(rootKeyBody('u3', 'u3-new-password'))).toMatchObject({ message: 'Key was created' });
    await expect(login('u3', 'u3-new-password')).resolves.toBeTruthy();
  });
});

type Who = 'rootAdmin' | 'adminClient' | 'scopedClient';
type Cell = [label: string, request: () => Promise<[method: string, path: string, body?: unknown]>, expected: Record<Who, number>];

const ALL = (rootAdmin: number, adminClient: number, scopedClient: number) => ({ rootAdmin, adminClient, scopedClient });
let newUser = 0;

const MATRIX: Cell[] = [
  ['GET /admin/identity', async () => ['GET', '/admin/identity'], ALL(200, 200, 200)],
  ['GET /admin/keys', async () => ['GET', '/admin/keys'], ALL(200, 200, 403)],
  ['GET /admin/keys/clients', async () => ['GET', '/admin/keys/clients'], ALL(200, 200, 403)],
  ['GET the owner’s permissions', async () => ['GET', `/admin/keys/${ownerId}/permissions`], ALL(200, 200, 403)],
  ['POST /admin/client-key', async () => ['POST', '/admin/client-key', { permissions: ['context:list'] }], ALL(200, 403, 403)],
  ['POST /admin/keys, a new username', async () => ['POST', '/admin/keys', rootKeyBody(`user${++newUser}`, 'new-user-password')], ALL(200, 403, 403)],
  ['POST /admin/keys, a second credential for ops (its own username)', async () => ['POST', '/admin/keys', rootKeyBody('ops', `ops-second-${++newUser}`)], ALL(200, 403, 403)],
  ['POST /admin/keys, a second credential for the owner', async () => ['POST', '/admin/keys', rootKeyBody('dev', 'attacker-password')], ALL(403, 403, 403)],
  ['PUT the owner’s permissions', async () => ['PUT', `/admin/keys/${ownerId}/permissions`, { add: ['context:list'] }], ALL(403, 403, 403)],
  ['PUT the permissions of ops (the caller itself, or the root key the clients descend from)', async () => ['PUT', `/admin/keys/${opsId}/permissions`, { add: ['context:list'] }], ALL(200, 403, 403)],
  ['PUT an admin root key’s permissions', async () => ['PUT', `/admin/keys/${await freshRoot()}/permissions`, { add: ['context:list'] }], ALL(200, 403, 403)],
  ['PUT a narrow root key’s permissions', async () => ['PUT', `/admin/keys/${await freshRoot(['context:list'])}/permissions`, { add: ['application:list'] }], ALL(200, 200, 403)],
  ['PUT a client key’s permissions', async () => ['PUT', `/admin/keys/${await freshClient()}/permissions`, { add: ['application:list'] }], ALL(200, 200, 403)],
  ['DELETE the owner’s key', async () => ['DELETE', `/admin/keys/${ownerId}`], ALL(403, 403, 403)],
  ['DELETE an admin root key', async () => ['DELETE', `/admin/keys/${await freshRoot()}`], ALL(200, 403, 403)],
  ['DELETE a narrow root key', async () => ['DELETE', `/admin/keys/${await freshRoot(['context:list'])}`], ALL(200, 200, 403)],
  ['DELETE a client key of ops', async () => ['DELETE', `/admin/keys/${opsId}/clients/${await freshClient()}`], ALL(200, 200, 403)],
  ['revoke the owner’s key', async () => ['POST', '/admin/revoke', { client_id: ownerId }], ALL(403, 403, 403)],
  ['revoke ops (the caller itself, or the root key the clients descend from)', async () => ['POST', '/admin/revoke', { client_id: opsId }], ALL(0, 403, 403)],
  ['revoke an admin root key', async () => ['POST', '/admin/revoke', { client_id: await freshRoot() }], ALL(200, 403, 403)],
  ['revoke a narrow root key', async () => ['POST', '/admin/revoke', { client_id: await freshRoot(['context:list']) }], ALL(200, 200, 403)],
  ['revoke a client key', async () => ['POST', '/admin/revoke', { client_id: await freshClient() }], ALL(200, 200, 403)],
];

describe('the key-route matrix', () => {
  it.each(MATRIX)('%s', async (_label, request, expected) => {
    const got: Partial<Record<Who, number>> = {};
    const want: Partial<Record<Who, number>> = {};
    for (const who of ['rootAdmin', 'adminClient', 'scopedClient'] as const) {
      if (expected[who] === 0) continue; // destroys the caller or the owner: the last test
      const [method, path, body] = await request();
      got[who] = (await call(tokens[who], method, path, body)).status;
      want[who] = expected[who];
    }
    expect(got).toEqual(want);
  }, 60_000);

  it('the owner revokes every other admin key; its own, the last, is refused alike by DELETE and revoke (409)', async () => {
    const keys = await owner.auth.listRootKeys();
    for (const k of keys) {
      if (k.key_id !== ownerId && k.revoked_at == null && k.permissions.includes('admin')) {
        expect((await call(tokens.owner, 'POST', '/admin/revoke', { client_id: k.key_id })).status).toBe(200);
      }
    }
    const del = await call(tokens.owner, 'DELETE', `/admin/keys/${ownerId}`);
    const rev = await call(tokens.owner, 'POST', '/admin/revoke', { client_id: ownerId });
    expect([del.status, rev.status]).toEqual([409, 409]);
    expect(JSON.parse(del.text).error).toBe(JSON.parse(rev.text).error);
  });
});

describe('ownership transfer', () => {
  const transfer = (username: string) => runCli(['key', 'transfer-owner', username, '--home', join(node.paths.dir, '..'), '--node', 'test', '--output', 'json']);

  it('moves ownership only by `hearth key transfer-owner` on the stopped node’s home; the previous owner is then an ordinary admin', async () => {
    await owner.auth.createRootKey(rootKeyBody('heir', 'heir-password'));
    const heirId = subOf((await login('heir', 'heir-password')).token);
    const running = await transfer('heir');
    expect(running.code).not.toBe(0);
    expect(running.stderr).toMatch(/in use by a running node/);
    await node.stop();
    const refused = await transfer('nobody');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/nobody has no active root key holding admin/);
    const done = await transfer('heir');
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ event: 'owner_transferred', from: node.adminUser, to: 'heir' });
    node = await startTestNode({ paths: node.paths });
    const dev = (await login(node.adminUser, node.adminPassword)).client;
    const heir = (await login('heir', 'heir-password')).client;
    expect(await statusOf(dev.auth.revoke(heirId))).toBe(403);
    expect(await statusOf(heir.auth.revoke(ownerId))).toBe(200);
    await expect(login(node.adminUser, node.adminPassword)).rejects.toThrow();
  }, 120_000);
});
