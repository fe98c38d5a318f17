/**
 * The node's owner (issue #37 item 2; docs/security.md "Who may change a root key"): a second admin
 * cannot take the owner's account over, nor another user's, and ownership moves only by
 * provisioning or an explicit transfer, never by falling back to another admin.
 */
import { describe, expect, it } from 'vitest';
import { HearthError } from '../errors.ts';
import type { Principal } from './service.ts';
import { authKit } from './testkit.ts';

async function kindOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(HearthError);
  return (err as HearthError).kind;
}

const body = (username: string, password: string) => ({ public_key: username, auth_method: 'user_password', provider_data: { username, password } });

/** dev (the owner), u2 (a second admin) and u3 (a third user, admin too), each logged in. */
async function threeUsers() {
  const k = await authKit();
  const as = async (username: string, password: string): Promise<Principal> =>
    k.principalOf((await k.auth.login({ auth_method: 'user_password', public_key: username, client_name: 'c', provider_data: { username, password } })).access_token);
  const owner = await as('dev', 'dev-password');
  await k.keys.createRootKey(body('u2', 'u2-password'), owner);
  await k.keys.createRootKey(body('u3', 'u3-password'), owner);
  return { k, as, owner, u2: await as('u2', 'u2-password'), u3: await as('u3', 'u3-password') };
}

describe('a second admin', () => {
  it('cannot revoke, delete or narrow any key of the owner', async () => {
    const { k, owner, u2 } = await threeUsers();
    expect(await kindOf(k.keys.revoke(u2, owner.keyId))).toBe('forbidden');
    expect(await kindOf(k.keys.deleteRootKey(u2, owner.keyId))).toBe('forbidden');
    expect(await kindOf(k.keys.updatePermissions(u2, owner.keyId, ['context:list'], ['admin']))).toBe('forbidden');
    // a second credential of the owner is the owner's too
    await k.keys.createRootKey(body('dev', 'dev-second-password'), owner);
    const second = (await k.keys.listRootKeys()).find((r) => r.username === 'dev' && r.id !== owner.keyId)!;
    expect(await kindOf(k.keys.revoke(u2, second.id))).toBe('forbidden');
    expect((await k.keyStore.get(owner.keyId))!.revokedAt).toBeNull();
    await expect(k.login()).resolves.toHaveProperty('access_token');
  });

  it('cannot log in as the owner or another active user with a password it chose', async () => {
    const { k, as, u2 } = await threeUsers();
    expect(await kindOf(k.keys.createRootKey(body('dev', 'u2-chosen-password'), u2))).toBe('forbidden');
    expect(await kindOf(k.keys.createRootKey(body('u3', 'u2-chosen-password'), u2))).toBe('forbidden');
    expect(await kindOf(as('dev', 'u2-chosen-password'))).toBe('unauthenticated');
    expect(await kindOf(as('u3', 'u2-chosen-password'))).toBe('unauthenticated');
  });

  it('may revoke another user, but not re-create that username: only the owner may', async () => {
    const { k, as, owner, u2, u3 } = await threeUsers();
    await k.keys.revoke(u2, u3.keyId);
    expect(await kindOf(k.keys.createRootKey(body('u3', 'u2-chosen-password'), u2))).toBe('forbidden');
    expect(await kindOf(as('u3', 'u2-chosen-password'))).toBe('unauthenticated');
    // a client key of the owner does not speak for the owner
    const { pair } = await k.keys.createClientKey(owner, { permissions: ['admin'] });
    expect(await kindOf(k.keys.createRootKey(body('u3', 'client-chosen-password'), await k.principalOf(pair.access_token)))).toBe('forbidden');
    expect(await k.keys.createRootKey(body('u3', 'u3-new-password'), owner)).toEqual({ status: true, message: 'Key was created' });
    await expect(as('u3', 'u3-new-password')).resolves.toBeTruthy();
  });

  it('never becomes the owner by falling back, even once the owner’s first key is gone', async () => {
    const { k, owner, u2, u3 } = await threeUsers();
    await k.keys.createRootKey(body('dev', 'dev-second-password'), owner);
    await k.keys.revoke(owner, owner.keyId); // the owner may revoke its own key
    expect(await k.keys.owner()).toMatchObject({ username: 'dev', history: [] });
    expect(await kindOf(k.keys.createRootKey(body('u3', 'u2-chosen-password'), u2))).toBe('forbidden');
    const second = (await k.keys.listRootKeys()).find((r) => r.username === 'dev' && r.revokedAt === null)!;
    expect(await kindOf(k.keys.revoke(u2, second.id))).toBe('forbidden');
    expect(await kindOf(k.keys.revoke(u3, second.id))).toBe('forbidden');
  });
});

describe('the owner', () => {
  it('keeps an admin key of its own: its last one is neither revoked nor narrowed', async () => {
    const { k, owner } = await threeUsers();
    expect(await kindOf(k.keys.revoke(owner, owner.keyId))).toBe('conflict');
    expect(await kindOf(k.keys.deleteRootKey(owner, owner.keyId))).toBe('conflict');
    expect(await kindOf(k.keys.updatePermissions(owner, owner.keyId, ['context:list'], ['admin']))).toBe('conflict');
    expect((await k.keyStore.get(owner.keyId))!.permissions).toEqual(['admin']);
  });

  it('moves only by an explicit transfer, to a user holding an active admin key; the history keeps the previous owner', async () => {
    const { k, owner, u2, u3 } = await threeUsers();
    await k.keys.updatePermissions(owner, u3.keyId, ['context:list'], ['admin']);
    expect(await kindOf(k.keys.transferOwner('u3'))).toBe('conflict');
    expect(await kindOf(k.keys.transferOwner('nobody'))).toBe('conflict');
    k.clock.advance(5);
    const out = await k.keys.transferOwner('u2');
    expect(out).toMatchObject({ from: 'dev', to: 'u2' });
    expect(await k.keys.owner()).toMatchObject({ username: 'u2', how: 'transferred', history: [{ username: 'dev', how: 'provisioned' }] });
    // now u2 speaks for the node and dev is an ordinary admin
    expect(await kindOf(k.keys.revoke(owner, u2.keyId))).toBe('forbidden');
    await expect(k.keys.revoke(u2, owner.keyId)).resolves.toBeUndefined();
  });
});
