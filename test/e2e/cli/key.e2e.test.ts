/**
 * `hearth key …` end to end (issue #6 CLI; auth spec `/admin/keys*`, `/admin/client-key`): root
 * and client keys through the CLI as a child process, in human and JSON output, with passwords
 * never on argv, tokens printed only when asked, confirmations, and the node's refusals.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import { CliUser, startCliNode, type CliNode } from '../../helpers/cli.ts';
import type { TestNode } from '../../helpers/node.ts';

let cli: CliNode;
let node: TestNode;
let user: CliUser;
let sdk: Client;
let work: string;
let adminKey: string;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

beforeAll(async () => {
  cli = await startCliNode();
  ({ node, sdk, user } = cli);
  adminKey = (await sdk.auth.listRootKeys()).find((k) => k.public_key === node.adminUser)!.key_id;
  work = await mkdtemp(join(tmpdir(), 'hearth-cli-key-'));
}, 60_000);

afterAll(async () => {
  await cli?.destroy();
  await rm(work, { recursive: true, force: true });
});

const rootKeyOf = async (publicKey: string) => (await sdk.auth.listRootKeys()).find((k) => k.public_key === publicKey && k.revoked_at === null)?.key_id;

describe('hearth key: root keys', { timeout: 120_000 }, () => {
  it('lists root keys as a table or as the node\'s records; not logged in is exit 3', async () => {
    const keys = await user.json(['key', 'list']);
    expect(keys).toEqual([expect.objectContaining({ key_id: adminKey, public_key: node.adminUser, permissions: ['admin'], revoked_at: null })]);
    const table = await user.human(['key', 'ls', '--wide']);
    expect(table).toMatch(/^KEY ID\s+PUBLIC KEY\s+METHOD\s+PERMISSIONS\s+CREATED\s+REVOKED\n/);
    expect(table).toMatch(new RegExp(`${adminKey}\\s+${node.adminUser}\\s+user_password\\s+admin\\s+\\d{4}-\\d\\d-\\d\\dT\\S+Z\\s+-\\n`));
    // without --wide the key id is shortened so the table fits 100 columns
    const cut = await user.run(['key', 'ls']);
    expect(cut.stderr).toBe('(some values are cut short with …: --wide shows them whole)\n');
    expect((await user.run(['key', 'ls', '--wide'])).stderr).toBe('');
    const narrow = cut.stdout;
    expect(narrow).toMatch(new RegExp(`^${adminKey.slice(0, 20)}\\S*…\\s+${node.adminUser}\\s`, 'm'));
    expect(Math.max(...narrow.trimEnd().split('\n').map((l) => l.length))).toBeLessThanOrEqual(100);
    // plain: tab-separated, no header, full values
    expect(await user.human(['key', 'ls', '--output', 'plain'])).toMatch(new RegExp(`^${adminKey}\tdev\tuser_password\tadmin\t\\d{4}-\\S+Z\t-\n$`));
    const stranger = await CliUser.create(node.url);
    try {
      const res = await stranger.run(['key', 'list']);
      expect(res.code).toBe(3);
      expect(res.stderr).toBe('hearth: not logged in: hearth login\n');
    } finally {
      await stranger.destroy();
    }
  });

  it('creates root keys with the password from stdin or a file, never from argv', async () => {
    const argv = await user.run(['key', 'create', '--username', 'ops', '--password', 'ops-password']);
    expect(argv.code).toBe(2);
    const none = await user.run(['key', 'create', '--username', 'ops']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--password-stdin');
    expect(none.stderr).toContain('HEARTH_KEY_PASSWORD');
    expect(await rootKeyOf('ops')).toBeUndefined();

    expect(await user.json(['key', 'create', '--username', 'ops', '--password-stdin'], { input: 'ops-password\n' })).toEqual({
      status: true,
      message: 'Key was created',
      username: 'ops',
    });
    const file = join(work, 'pw');
    await writeFile(file, 'ops2-password\n', { mode: 0o600 });
    expect(await user.human(['key', 'create', '--username', 'ops2', '--public-key', 'ops2-pk', '--password-file', file])).toBe(
      'Key was created for ops2 (see: hearth key list)\n',
    );
    // the new keys log in with those passwords
    const ops = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    await ops.auth.login({ username: 'ops2', password: 'ops2-password' });
    expect(await rootKeyOf('ops2-pk')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a password the node refuses is its 400 (exit 1, its message)', async () => {
    const res = await user.run(['key', 'create', '--username', 'weak', '--password-stdin'], { input: 'short\n' });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('Password must be at least 8 characters long');
    expect(res.stderr).not.toContain('short\n');
  });

  it('shows and changes permissions', async () => {
    const ops = (await rootKeyOf('ops'))!;
    expect(await user.json(['key', 'permissions', adminKey])).toEqual({ key_id: adminKey, permissions: ['admin'] });
    expect(await user.json(['key', 'permissions', ops, '--add', 'blob', '--add', 'context', '--remove', 'admin'])).toEqual({
      key_id: ops,
      permissions: ['blob', 'context'],
    });
    expect(await user.human(['key', 'permissions', ops])).toBe(`key ${ops}:\n  blob\n  context\n`);
    expect(await user.human(['key', 'permissions', ops, '--remove', 'context'])).toBe(`permissions of ${ops} are now:\n  blob\n`);
    const empty = await user.run(['key', 'permissions', ops, '--remove', 'blob']);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('Key must have at least one permission');
    const bad = await user.run(['key', 'permissions', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('client key id (a UUID)');
  });

  it('revoke asks first, refuses the last active key, and answers 404 for a revoked one', async () => {
    const ops = (await rootKeyOf('ops'))!;
    const ops2 = (await rootKeyOf('ops2-pk'))!;
    const asked = await user.run(['key', 'revoke', ops]);
    expect(asked.code).toBe(2);
    expect(asked.stderr).toContain('pass --yes');
    expect(await rootKeyOf('ops')).toBe(ops);

    expect(await user.human(['key', 'revoke', ops, '--yes'])).toMatch(new RegExp(`^revoked root key ${ops} at \\d{4}-`));
    expect(await user.json(['key', 'revoke', ops2, '-y'])).toEqual({ key_id: ops2, revoked_at: expect.any(Number) });
    expect(await rootKeyOf('ops')).toBeUndefined();

    const again = await user.run(['key', 'revoke', ops, '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Root key not found (HTTP 404)');
    const last = await user.run(['key', 'revoke', adminKey, '--yes', '--output', 'json']);
    expect(last.code).toBe(1);
    expect(JSON.parse(last.stderr)).toMatchObject({ exitCode: 1, error: expect.stringContaining('Cannot revoke the last active admin key') });
    expect(await rootKeyOf(node.adminUser)).toBe(adminKey);
  });
});

describe('hearth key: client keys', { timeout: 120_000 }, () => {
  it('mints a client key: JSON prints the tokens; human needs --show-tokens or --out', async () => {
    const minted = await user.json(['key', 'client', 'create', '--permission', 'blob']);
    expect(minted).toEqual({ client_id: expect.stringMatching(UUID), access_token: expect.stringMatching(/^ey/), refresh_token: expect.stringMatching(/^ey/) });
    const scoped = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    await scoped.http.setTokens({ accessToken: minted.access_token, refreshToken: minted.refresh_token });
    expect(await scoped.blobs.list()).toEqual([]);

    const before = (await sdk.auth.listClientKeys()).length;
    const lost = await user.run(['key', 'client', 'create', '--permission', 'blob']);
    expect(lost.code).toBe(2);
    expect(lost.stderr).toContain('the tokens would be lost');
    expect((await sdk.auth.listClientKeys()).length).toBe(before);

    const shown = await user.human(['key', 'client', 'create', '--permission', 'application', '--show-tokens', '--ttl', '3600']);
    expect(shown).toMatch(/^created client key [0-9a-f-]{36}\naccess token:  ey\S+\nrefresh token: ey\S+\n$/);

    const out = join(work, 'client.json');
    const saved = await user.human(['key', 'client', 'create', '--permission', 'context', '--out', out]);
    expect(saved).toMatch(new RegExp(`^created client key [0-9a-f-]{36}\\ntokens written to ${out} \\(mode 0600\\)\\n$`));
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    const file = JSON.parse(await readFile(out, 'utf8'));
    expect(file).toMatchObject({ node: node.url, client_id: expect.stringMatching(UUID), access_token: expect.stringMatching(/^ey/) });
    expect(saved).toContain(file.client_id);
    expect(saved).not.toContain(file.access_token);
    expect(saved).not.toContain(file.refresh_token);
    const again = await user.run(['key', 'client', 'create', '--permission', 'blob', '--out', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('exists; pass --force');

    const refused = await user.run(['key', 'client', 'create', '--permission', 'not a permission', '--output', 'json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ exitCode: 1, status: 400 });
  });

  it('lists client keys and revokes one after confirmation', async () => {
    const keys = await user.json(['key', 'clients']);
    expect(keys.length).toBe(3);
    expect(keys[0]).toMatchObject({ client_id: expect.stringMatching(UUID), root_key_id: adminKey, is_valid: true });
    const table = await user.human(['key', 'clients', '--wide']);
    expect(table).toMatch(/^CLIENT ID\s+ROOT KEY\s+NAME\s+PERMISSIONS\s+EXPIRES\s+VALID\n/);
    expect(table).toContain(keys[0].client_id);
    // key names are filled: an unbound key is named by its permissions
    expect(table).toMatch(/Client - blob\s+blob\s/);
    expect(Math.max(...(await user.human(['key', 'clients'])).trimEnd().split('\n').map((l) => l.length))).toBeLessThanOrEqual(100);

    const [a, b] = keys;
    const asked = await user.run(['key', 'client', 'revoke', adminKey, a.client_id]);
    expect(asked.code).toBe(2);
    expect((await sdk.auth.listClientKeys()).find((k) => k.client_id === a.client_id)!.is_valid).toBe(true);
    expect(await user.json(['key', 'client', 'revoke', adminKey, a.client_id, '--yes'])).toMatchObject({
      client_id: a.client_id,
      revoked_at: expect.any(Number),
    });
    // ids as the narrow tables show them: unique prefixes of both (issue #34 §3)
    expect(await user.human(['key', 'client', 'revoke', adminKey.slice(0, 8), b.client_id.slice(0, 13), '-y'])).toMatch(new RegExp(`^revoked client key ${b.client_id} at `));
    const after = await sdk.auth.listClientKeys();
    expect(after.filter((k) => k.is_valid).map((k) => k.client_id)).toEqual([keys[2].client_id]);

    const gone = await user.run(['key', 'client', 'revoke', adminKey, a.client_id, '--yes']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('Client key not found (HTTP 404)');
    const bad = await user.run(['key', 'client', 'revoke', adminKey, 'nope', '--yes']);
    expect(bad.code).toBe(2);
  });
});
