/**
 * Crash consistency: a node killed with SIGKILL while it acknowledges writes loses nothing it
 * acknowledged and leaves no half-applied change (every key record and its index agree).
 */
import { afterAll, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { clientIdOf, createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { makeHome, spawnNode } from '../../helpers/node.ts';

let root: string | undefined;
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

it('keeps every acknowledged key after kill -9 mid-write', async () => {
  const paths = await makeHome();
  root = join(paths.dir, '..');
  const env = { MERO_AUTH_ADMIN_USER: 'dev', MERO_AUTH_ADMIN_PASSWORD: 'dev-password' };
  const args = ['run', '--home', root, '--node', 'test'];
  const n1 = await spawnNode(args, env);
  const c = createClient({ baseUrl: n1.url, tokenStore: new MemoryTokenStore() });
  await c.auth.login({ username: 'dev', password: 'dev-password' });
  const acked: string[] = [];
  const users: string[] = [];
  let stop = false;
  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      try {
        if (i % 2 === 0) {
          const r = await c.auth.createClientKey({ permissions: ['context:list'] });
          acked.push(clientIdOf(r.data.access_token)!);
        } else {
          const u = `user-${w}-${i}`;
          await c.auth.createRootKey({ public_key: u, auth_method: 'user_password', provider_data: { username: u, password: 'password-' + u } });
          users.push(u);
        }
      } catch {
        return; // the node is gone
      }
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  while (acked.length + users.length < 40) await new Promise((r) => setTimeout(r, 10));
  n1.child.kill('SIGKILL');
  stop = true;
  await Promise.all(writers);
  await n1.exited;

  const n2 = await spawnNode(args, {});
  const c2 = createClient({ baseUrl: n2.url, tokenStore: new MemoryTokenStore() });
  await c2.auth.login({ username: 'dev', password: 'dev-password' });
  const clients = new Set((await c2.auth.listClientKeys()).map((k) => k.client_id));
  for (const id of acked) expect(clients.has(id)).toBe(true);
  const roots = await c2.auth.listRootKeys();
  for (const u of users) {
    expect(roots.some((k) => k.public_key === u)).toBe(true);
    // record and username index landed together: the account logs in
    const cu = createClient({ baseUrl: n2.url, tokenStore: new MemoryTokenStore() });
    await expect(cu.auth.login({ username: u, password: 'password-' + u })).resolves.toHaveProperty('accessToken');
  }
  n2.child.kill('SIGTERM');
  await n2.exited;
});
