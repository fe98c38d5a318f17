/**
 * docs/quick-start.md "4. Two nodes sharing a context", command by command, with the CLI: two node
 * processes on 127.0.0.1 connected to each other (the guide starts them with `hearth dev --nodes 2`,
 * which test/e2e/cli/dev-cluster.e2e.test.ts covers), one home with a profile per node; an
 * application installed on both, a context and a write on the first, an invitation, the second
 * joins the namespace and the context, waits until it has caught up, reads the first one's write,
 * and writes back — with `@last` and a one-line invitation written 0600, as
the guide types them (`hearth dev stop | start | status` are test/e2e/cli/dev-supervise.e2e.test.ts).
If this test changes, the guide must.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CliUser } from '../../helpers/cli.ts';
import { eventually, startCluster, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';
import { ADMIN_PASSWORD, ADMIN_USER } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

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

  const ns = (await json<{ namespaceId: string }>('a', ['namespace', 'create', '--application', '@last'])).namespaceId;
  const created = await hearth('a', ['context', 'create', '--application', '@last', '--group', '@last']);
  const ctx = /^created context ([0-9a-f]{64})\n/.exec(created)![1]!;
  await hearth('a', ['call', 'set', '--context', '@last', '--args', '{"key":"greeting","value":"hello"}']);
  const file = join(work, 'invitation.txt');
  expect(await hearth('a', ['namespace', 'invite', '@last', '--out', file])).toContain('(mode 0600; it is a credential until');
  expect((await stat(file)).mode & 0o777).toBe(0o600);
  expect(await readFile(file, 'utf8')).toMatch(/^inv1\.[A-Za-z0-9_-]+\n$/);

  expect(await hearth('b', ['namespace', 'join', `@${file}`])).toContain(`joined namespace ${ns}`);
  // the whole id: right after joining the namespace, node b may not have heard of the context yet
  expect(await hearth('b', ['context', 'join', ctx])).toContain(`joined context ${ctx}`);
  const status = await hearth('b', ['context', 'status', '@last', '--wait']);
  expect(status).toMatch(/caught up:\s+yes/);
  expect(status).toMatch(/peers:\s+[0-9a-f]{12}…/);
  expect((await hearth('b', ['call', 'get', '--context', '@last', '--args', '{"key":"greeting"}'])).trim()).toBe('hello');

  // and back: a write on the second node reaches the first
  await hearth('b', ['call', 'set', '--context', '@last', '--args', '{"key":"reply","value":"hi"}']);
  await eventually('the first node reads the reply', async () => (await hearth('a', ['call', 'get', '--context', '@last', '--args', '{"key":"reply"}'])).trim() === 'hi', 30_000);
});
