/**
 * docs/quick-start.md "4. Two nodes sharing a context", command by command, with the CLI: two node
 * processes on 127.0.0.1 connected to each other (the guide starts them with `hearth dev --nodes 2`,
 * which test/e2e/cli-dev-cluster.e2e.test.ts covers), one home with a profile per node; an
 * application installed on both, a context and a write on the first, an invitation, the second
 * joins the namespace and the context, waits until it has caught up, reads the first one's write,
 * and writes back. If this test changes, the guide must.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CliUser } from '../helpers/cli.ts';
import { eventually, startCluster, type Cluster, type ClusterNode } from '../helpers/cluster.ts';
import { ADMIN_PASSWORD, ADMIN_USER } from '../helpers/node.ts';
import { buildTestApp } from '../helpers/wasm-apps.ts';

let cluster: Cluster;
let a: ClusterNode, b: ClusterNode;
let user: CliUser;
let work: string;

beforeAll(async () => {
  cluster = await startCluster(2);
  [a, b] = cluster.nodes as [ClusterNode, ClusterNode];
  user = await CliUser.create(a.url);
  work = await mkdtemp(join(tmpdir(), 'hearth-quick-start-net-'));
  await writeFile(join(work, 'kv.wasm'), await buildTestApp('kv')); // what `npm run example:app` writes
}, 180_000);
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
  await user?.destroy();
  await cluster?.destroy();
});

/** `hearth <args> --profile <p>` in the user's home, as the guide writes them; expects exit 0. */
async function hearth(profile: 'a' | 'b', args: string[], json = false): Promise<string> {
  const res = await user.run([...args, '--profile', profile, '--home', user.root, ...(json ? ['--output', 'json'] : [])], { bare: true });
  expect(res.code, `hearth ${args.join(' ')} --profile ${profile}: ${res.stderr}`).toBe(0);
  return res.stdout;
}
const json = async <T>(profile: 'a' | 'b', args: string[]): Promise<T> => JSON.parse(await hearth(profile, args, true)) as T;

it('two nodes share a context from the command line, as the quick start says', { timeout: 240_000 }, async () => {
  const passwordFile = join(work, 'admin-password'); // the file `hearth dev` keeps in each node's home
  await writeFile(passwordFile, `${ADMIN_PASSWORD}\n`, { mode: 0o600 });
  await hearth('a', ['login', '--node', a.url, '--username', ADMIN_USER, '--password-file', passwordFile]);
  await hearth('b', ['login', '--node', b.url, '--username', ADMIN_USER, '--password-file', passwordFile]);

  const keygen = await user.run(['app', 'keygen', join(work, 'signing.pem')], { bare: true });
  expect(keygen.code, keygen.stderr).toBe(0);
  const bundled = await user.run(
    ['app', 'bundle', '--wasm', join(work, 'kv.wasm'), '--package', 'com.example.kv', '--version', '1.0.0', '--key', join(work, 'signing.pem'), '--out', join(work, 'kv.mpk')],
    { bare: true },
  );
  expect(bundled.code, bundled.stderr).toBe(0);
  const app = (await json<{ applicationId: string }>('a', ['app', 'install-dev', join(work, 'kv.mpk')])).applicationId;
  expect((await json<{ applicationId: string }>('b', ['app', 'install-dev', join(work, 'kv.mpk')])).applicationId).toBe(app);

  const ns = (await json<{ namespaceId: string }>('a', ['namespace', 'create', '--application', app])).namespaceId;
  const ctx = (await json<{ contextId: string }>('a', ['context', 'create', '--application', app, '--group', ns])).contextId;
  await hearth('a', ['call', 'set', '--context', ctx, '--args', '{"key":"greeting","value":"hello"}']);
  const invitation = await hearth('a', ['namespace', 'invite', ns]);
  await writeFile(join(work, 'invitation.json'), invitation);

  expect(await hearth('b', ['namespace', 'join', ns, `@${join(work, 'invitation.json')}`])).toContain(`joined namespace ${ns}`);
  expect(await hearth('b', ['context', 'join', ctx])).toContain(`joined context ${ctx}`);
  const status = await hearth('b', ['context', 'status', ctx, '--wait']);
  expect(status).toMatch(/caught up:\s+yes/);
  expect(status).toMatch(/peers:\s+[0-9a-f]{12}…/);
  expect((await hearth('b', ['call', 'get', '--context', ctx, '--args', '{"key":"greeting"}'])).trim()).toBe('hello');

  // and back: a write on the second node reaches the first
  await hearth('b', ['call', 'set', '--context', ctx, '--args', '{"key":"reply","value":"hi"}']);
  await eventually('the first node reads the reply', async () => (await hearth('a', ['call', 'get', '--context', ctx, '--args', '{"key":"reply"}'])).trim() === 'hi', 30_000);
});
