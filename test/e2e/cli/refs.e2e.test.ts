/**
 * Ids a person can type (issue #25 §3) against a real node: unique prefixes (≥ 6 hex) of
 * contexts, applications, namespaces, groups, accounts and blobs wherever a full id is taken, an
 * ambiguous prefix refused listing the candidates, aliases wherever an id is (`namespace create
 * --application <alias>`), `@last` remembered per profile and node, `hearth use`, and invitations
 * as one line written 0600 with `--out`.
 */
import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { startCliNode, type CliNode, type CliUser } from '../../helpers/cli.ts';
import type { TestNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

/** Two seeds whose Ed25519 public keys start with the same 6 hex characters (a birthday search). */
function collidingSeeds(): [string, string, string] {
  const seen = new Map<string, string>();
  for (;;) {
    const seed = randomBytes(32);
    const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
    const spki = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'der', type: 'spki' });
    const prefix = spki.subarray(-32).toString('hex').slice(0, 6);
    const other = seen.get(prefix);
    if (other) return [other, seed.toString('hex'), prefix];
    seen.set(prefix, seed.toString('hex'));
  }
}
let cli: CliNode;
let node: TestNode;
let sdk: Client;
let user: CliUser;
let bundlePath: string;

beforeAll(async () => {
  cli = await startCliNode();
  ({ node, sdk, user } = cli);
  bundlePath = (await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv' })).path;
}, 180_000);
afterAll(() => cli?.destroy());

describe('@last, aliases and prefixes', { timeout: 120_000 }, () => {
  let app: string;
  let ns: string;
  let ctx: string;

  it('remembers what was created, so a walkthrough needs no copied id', async () => {
    expect((await user.run(['context', 'get', '@last'])).stderr).toMatch(/^hearth: <context>: no context to call @last yet for profile "default" on http:\/\/127\.0\.0\.1:\d+: create one, or name one with: hearth use context/);
    app = (await user.json(['app', 'install-dev', bundlePath])).applicationId;
    // an application alias where namespace create used to refuse it
    await user.human(['alias', 'create', 'application', 'kv', '@last']);
    ns = (await user.json(['namespace', 'create', '--application', 'kv'])).namespaceId;
    expect((await sdk.namespaces.get(ns)).targetApplicationId).toBe(app);
    ctx = (await user.json(['context', 'create', '--application', '@last', '--group', '@last'])).contextId;
    expect((await sdk.contexts.get(ctx)).applicationId).toBe(app);
    expect((await sdk.groups.contexts(ns)).map((c) => c.contextId)).toEqual([ctx]);
    await user.human(['alias', 'create', 'context', 'kv-main', '@last']);
    expect(await user.human(['call', 'set', '--context', '@last', '--args', '{"key":"k","value":"v"}'])).toBe('set: no return value\n');
    expect(await user.human(['call', 'get', '--context', 'kv-main', '--args', '{"key":"k"}'])).toBe('v\n');
    expect(await user.json(['use'])).toEqual([
      { kind: 'context', id: ctx },
      { kind: 'namespace', id: ns },
      { kind: 'application', id: app },
    ]);
    // remembered per profile: another profile has nothing
    expect((await user.run(['namespace', 'get', '@last', '--profile', 'other'])).code).toBe(2);
  });

  it('accepts a unique prefix of at least 6 hex characters of every kind of id', async () => {
    const p = (id: string) => id.slice(0, 8);
    expect((await user.json(['context', 'get', p(ctx)])).id).toBe(ctx);
    expect((await user.json(['app', 'get', p(app)])).id).toBe(app);
    expect((await user.json(['namespace', 'get', p(ns)])).namespaceId).toBe(ns);
    const group = (await user.json(['namespace', 'create-group', p(ns), '--name', 'team'])).groupId as string;
    expect((await user.json(['group', 'get', p(group)])).groupId ?? group).toBe(group);
    const me = (await sdk.accounts.identity()).accountId;
    const caps = await user.json(['group', 'members', 'get-capabilities', p(ns), p(me)]);
    expect(caps).toBeTruthy();
    const blob = (await sdk.blobs.list())[0]!.blob_id;
    expect((await user.json(['blob', 'info', p(blob)])).blobId ?? blob).toBe(blob);
    expect(await user.human(['call', 'get', '--context', p(ctx), '--args', '{"key":"k"}'])).toBe('v\n');
    // too short, and a prefix nothing has
    const short = await user.run(['context', 'get', ctx.slice(0, 5)]);
    expect(short.code).toBe(2);
    const none = await user.run(['namespace', 'get', 'ffffff0000']);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe('hearth: no namespace id on this node starts with ffffff0000 (see: hearth namespace list)\n');
  });

  it('refuses an ambiguous prefix, listing the candidates', async () => {
    // two context seeds whose context ids (their Ed25519 public keys) share the first 6 hex characters
    const [s1, s2, shared] = collidingSeeds();
    const a = (await user.json(['context', 'create', '--application', app, '--group', ns, '--seed', s1])).contextId as string;
    const b = (await user.json(['context', 'create', '--application', app, '--group', ns, '--seed', s2])).contextId as string;
    expect([a.slice(0, 6), b.slice(0, 6)]).toEqual([shared, shared]);
    const amb = await user.run(['context', 'get', shared]);
    expect(amb.code).toBe(2);
    const [first, second] = [a, b].sort();
    expect(amb.stderr).toBe(`hearth: context prefix ${shared} is ambiguous: ${first!.slice(0, 16)}…, ${second!.slice(0, 16)}…; type more characters\n`);
    // one more character tells them apart (when it does)
    let n = 6;
    while (a[n] === b[n]) n++;
    expect((await user.json(['context', 'get', a.slice(0, n + 1)])).id).toBe(a);
  });

  it('hearth use names what @last stands for', async () => {
    const other = (await user.json(['context', 'create', '--application', 'kv', '--group', ns])).contextId as string;
    expect((await user.json(['context', 'get', '@last'])).id).toBe(other);
    expect(await user.human(['use', 'context', 'kv-main'])).toBe(`@last context is now ${ctx}\n`);
    expect((await user.json(['context', 'get', '@last'])).id).toBe(ctx);
    const bad = await user.run(['use', 'context', 'no-such']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('no context alias "no-such"');
    // a deleted context is not @last any more
    await user.human(['use', 'context', other]);
    await user.json(['context', 'delete', '@last', '--yes']);
    expect((await user.run(['context', 'get', '@last'])).stderr).toContain('no context to call @last yet');
  });

  it('writes an invitation with --out as a 0600 file that join takes', async () => {
    const file = join(user.root, 'invitation.txt');
    const out = await user.human(['namespace', 'invite', '@last', '--out', file]);
    expect(out).toMatch(/^invitation written to .*invitation\.txt \(mode 0600; it is a credential until /);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const again = await user.run(['namespace', 'invite', '@last', '--out', file]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('exists; pass --force');
    // the joining side takes the file with or without naming the namespace (here: this node, already a member)
    expect(await user.human(['namespace', 'join', `@${file}`])).toContain(`joined namespace ${ns}`);
  });
});
