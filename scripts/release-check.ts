/**
 * The release check (issue #32 §2): what a user gets from the two tarballs, on each Node.js line
 * people run (22, 24, 26; `HEARTH_RELEASE_LINES` to choose), each fetched by
 * scripts/fetch-node-lines.sh into `${HEARTH_NODE_LINES_DIR:-.cache/node-lines}/<major>/`. CI
 * (`.ci/run`) runs it after `npm test`; by hand: `npx tsx scripts/release-check.ts`.
 *
 * For each line, with that line's `node` first on PATH (npm, the tarball's `hearth` and the SDK
 * project all run on it):
 * 1. `npm pack --workspaces --include-workspace-root` writes both tarballs (prepack builds what is
 *    stale); the node's tarball holds no tests, benches, CI files, test kits or credentials.
 * 2. `npm install --global --prefix <empty>` of the node's tarball puts `hearth` on PATH; it answers
 *    `--version`.
 * 3. `hearth init` + `hearth run` (through npm's bin symlink: the process is the line's node, with
 *    the malloc settings of bin/hearth.js's shell line); `hearth dev`; `hearth health`; the dashboard is served;
 *    the kv_store test application installed, JSON-RPC calls on it.
 * 4. A second installed node booting from the first joins the namespace and replicates the
 *    context both ways.
 * 5. The SDK's tarball installed alone into an empty project (at most two dependencies): the docs'
 *    first program (docs/sdk.md) type-checks against the installed types, runs from ESM and
 *    receives a state change; `require()` loads the package; the program bundles for the browser.
 *
 * And on Node 18 (unsupported, fetched as well): `bin/hearth.js` parses and refuses in one line.
 *
 * Prints each step with its time and a closing line; exits 1 on the first failure of a line (the
 * other lines still run). Not part of either package.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, readlink, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';
import { createClient, MemoryTokenStore, type Client } from '../src/client/index.ts';
import { eventually, freePortRun } from '../test/helpers/cluster.ts';
import { bundleExample, keepWriting, kvContext, sdkExampleSource } from '../test/helpers/sdk-example.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CACHE = process.env.HEARTH_NODE_LINES_DIR ?? join(ROOT, '.cache', 'node-lines');
const LINES = (process.env.HEARTH_RELEASE_LINES ?? '22 24 26').split(/[\s,]+/).filter(Boolean);
/** an unsupported line, for bin/hearth.js's refusal */
const OLD_LINE = '18';
const VERSION: string = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')).version;
const ADMIN = { username: 'admin', password: 'release-check-password' };
/** What the node's tarball must not hold. */
const NOT_IN_TARBALL = /(\.test\.|testkit|-lab\.|fake-fetch|mdns-child|network-port-suite|test-support|test-nodes|^package\/(test|bench|\.ci|src|scripts|docs|packages)\/|invitation\.txt|\.pem$|admin-password|token\.json$)/;

export const lineBinary = (major: string) => join(CACHE, major, 'node_modules', 'node', 'bin', 'node');

interface Line {
  major: string;
  node: string;
  env: NodeJS.ProcessEnv;
  work: string;
  children: Set<ReturnType<typeof spawn>>;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (within `timeoutMs`); throws with its output unless it exits 0. */
function run(line: Line, command: string, args: string[], opts: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv; allowFail?: boolean } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd ?? line.work, env: { ...line.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 300_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 || opts.allowFail) return resolve({ code, stdout, stderr });
      reject(new Error(`${command} ${args.join(' ')} exited with ${code ?? signal}:\n${(stderr || stdout).trim().split('\n').slice(-15).join('\n')}`));
    });
  });
}

interface Running {
  pid: number;
  url: string;
  stop(): Promise<void>;
  output(): string;
}

/** `hearth run` (or `dev`, with `command`) from the installed package; resolves at its "listening" event. */
function startNode(line: Line, hearth: string, home: string, name: string, command: string[] = ['run']): Promise<Running> {
  const child = spawn(hearth, [...command, '--home', home, '--node', name, '--output', 'json'], { cwd: line.work, env: { ...line.env, HEARTH_LOG: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  line.children.add(child);
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    line.children.delete(child);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => void stop().then(() => reject(new Error(`node ${name} did not start within 90 s:\n${out}`))), 90_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (const text of out.split('\n')) {
        if (!text.startsWith('{"event":"listening"') && !text.includes('"event":"listening"')) continue;
        const msg = JSON.parse(text) as { url: string };
        clearTimeout(timer);
        resolve({ pid: child.pid!, url: msg.url, stop, output: () => out });
        return;
      }
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`node ${name} exited before listening:\n${out}`));
    });
  });
}

async function login(url: string): Promise<Client> {
  const client = createClient({ baseUrl: url, tokenStore: new MemoryTokenStore(), timeoutMs: 30_000 });
  await client.auth.login(ADMIN);
  return client;
}

/** One line's whole check; `step` times and prints each part. */
async function checkLine(line: Line, step: <T>(name: string, f: () => Promise<T>) => Promise<T>): Promise<void> {
  const tarballs = join(line.work, 'tarballs');
  await mkdir(tarballs);
  const [nodeTgz, sdkTgz] = await step('npm pack: both tarballs', async () => {
    await run(line, 'npm', ['pack', '--workspaces', '--include-workspace-root', '--pack-destination', tarballs, '--loglevel=error'], { cwd: ROOT, timeoutMs: 600_000 });
    const names = await readdir(tarballs);
    const node = names.find((n) => n.startsWith(`hearth-node-${VERSION}`));
    const sdk = names.find((n) => n.startsWith(`hearth-sdk-${VERSION}`));
    if (!node || !sdk) throw new Error(`npm pack wrote ${names.join(', ') || 'nothing'}`);
    const listed = (await run(line, 'tar', ['tzf', join(tarballs, node)])).stdout.split('\n').filter(Boolean);
    const bad = listed.filter((f) => NOT_IN_TARBALL.test(f));
    if (bad.length) throw new Error(`the node's tarball holds what it must not: ${bad.slice(0, 10).join(', ')}`);
    for (const need of ['package/dist/app/main.js', 'package/build/dashboard/index.html', 'package/web/login.html', 'package/dist/client/index.d.ts']) {
      if (!listed.includes(need)) throw new Error(`the node's tarball has no ${need}`);
    }
    return [join(tarballs, node), join(tarballs, sdk)];
  });

  const prefix = join(line.work, 'prefix');
  const hearth = join(prefix, 'bin', 'hearth');
  await step('npm install --global (empty prefix): hearth --version', async () => {
    await run(line, 'npm', ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', nodeTgz], { timeoutMs: 600_000 });
    const { stdout } = await run(line, hearth, ['--version']);
    if (stdout.trim() !== VERSION) throw new Error(`hearth --version answered ${stdout.trim()}, not ${VERSION}`);
  });

  const homes = join(line.work, 'homes');
  const base = await freePortRun(2); // HTTP base, base + 1; swarm base + 1000, base + 1001
  const [portA, portB, swarmA, swarmB] = [base, base + 1, base + 1000, base + 1001];
  const initArgs = (name: string, port: number, swarm: number) => ['init', '--home', homes, '--node', name, '--admin-user', ADMIN.username, '--server-host', '127.0.0.1', '--server-port', String(port), '--swarm-host', '127.0.0.1', '--swarm-port', String(swarm)];
  const nodes: Running[] = [];
  try {
    const a = await step('hearth init, hearth run: the line’s node, with the malloc settings', async () => {
      await run(line, hearth, initArgs('a', portA, swarmA), { env: { MERO_AUTH_ADMIN_PASSWORD: ADMIN.password } });
      const a = await startNode(line, hearth, homes, 'a');
      nodes.push(a);
      const exe = await readlink(`/proc/${a.pid}/exe`);
      if (exe !== (await realpath(line.node))) throw new Error(`the node runs on ${exe}, not ${line.node}`);
      const environ = (await readFile(`/proc/${a.pid}/environ`, 'utf8')).split('\0');
      if (!environ.includes('MALLOC_ARENA_MAX=2') || !environ.includes('MALLOC_TRIM_THRESHOLD_=131072')) throw new Error('the installed hearth runs without the malloc settings of its shell line');
      return a;
    });
    await step('hearth dev: a development node initialises itself and serves', async () => {
      const dev = await startNode(line, hearth, join(line.work, 'dev-home'), 'dev', ['dev', '--port', '0', '--swarm-port', '0']);
      try {
        const res = await fetch(`${dev.url}/admin-api/health`, { signal: AbortSignal.timeout(15_000) });
        if (res.status !== 200) throw new Error(`GET /admin-api/health answered ${res.status}`);
      } finally {
        await dev.stop();
      }
    });
    await step('hearth health; the dashboard and the login page are served', async () => {
      const { stdout } = await run(line, hearth, ['health', '--node', a.url]);
      if (!/alive/.test(stdout)) throw new Error(`hearth health answered ${stdout}`);
      for (const path of ['/admin-dashboard/', '/auth/login']) {
        const res = await fetch(`${a.url}${path}`, { signal: AbortSignal.timeout(15_000) });
        const body = await res.text();
        if (res.status !== 200 || !/<html/i.test(body)) throw new Error(`GET ${path} answered ${res.status} ${body.slice(0, 200)}`);
      }
    });
    const clientA = await login(a.url);
    const kv = await step('the kv_store application: install, namespace, context, JSON-RPC set and get', async () => {
      const kv = await kvContext(clientA, line.work);
      await clientA.rpc.execute(kv.contextId, 'set', { key: 'greeting', value: `hello from Node ${line.major}` });
      const got = await clientA.rpc.execute(kv.contextId, 'get', { key: 'greeting' });
      if (got !== `hello from Node ${line.major}`) throw new Error(`get answered ${JSON.stringify(got)}`);
      return kv;
    });

    await step('a second installed node joins and replicates the context both ways', async () => {
      const status = await clientA.admin.networkStatus();
      const tcp = status.listenAddrs.find((addr) => addr.includes('/tcp/'));
      if (!tcp) throw new Error(`node a lists no TCP address: ${status.listenAddrs.join(', ')}`);
      const boot = tcp.includes('/p2p/') ? tcp : `${tcp}/p2p/${status.localPeerId}`;
      await run(line, hearth, [...initArgs('b', portB, swarmB), '--boot-nodes', boot], { env: { MERO_AUTH_ADMIN_PASSWORD: ADMIN.password } });
      const b = await startNode(line, hearth, homes, 'b');
      nodes.push(b);
      const clientB = await login(b.url);
      await clientB.applications.installDev(kv.bundlePath);
      const { invitation } = await clientA.invitations.inviteToNamespace(kv.namespaceId);
      await clientB.invitations.joinNamespace(kv.namespaceId, invitation);
      await clientB.groups.sync(kv.namespaceId);
      await eventually('node b reads what node a wrote', async () => (await clientB.rpc.execute(kv.contextId, 'get', { key: 'greeting' })) === `hello from Node ${line.major}`, 60_000);
      await clientB.rpc.execute(kv.contextId, 'set', { key: 'reply', value: 'from b' });
      await eventually('node a reads what node b wrote', async () => (await clientA.rpc.execute(kv.contextId, 'get', { key: 'reply' })) === 'from b', 60_000);
    });

    const project = join(line.work, 'sdk-project');
    await step('the SDK tarball alone in an empty project: ≤ 2 dependencies, types, ESM, require()', async () => {
      await mkdir(project);
      await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'first-program', private: true, type: 'module' }));
      await run(line, 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', sdkTgz], { cwd: project, timeoutMs: 300_000 });
      const installed = (await readdir(join(project, 'node_modules'))).filter((n) => !n.startsWith('.'));
      const deps = Object.keys(JSON.parse(await readFile(join(project, 'node_modules/hearth-sdk/package.json'), 'utf8')).dependencies ?? {});
      if (deps.length > 2 || installed.length > 3) throw new Error(`the SDK brought ${installed.join(', ')} (dependencies: ${deps.join(', ') || 'none'})`);
      const source = await sdkExampleSource();
      await writeFile(join(project, 'first-program.ts'), source);
      await writeFile(join(project, 'first-program.mjs'), (await transform(source, { loader: 'ts', format: 'esm', target: 'es2022' })).code);
      await writeFile(join(project, 'required.cjs'), "const { createClient, HttpError } = require('hearth-sdk');\ncreateClient({ baseUrl: process.argv[2] }).admin.health().then((h) => console.log(JSON.stringify({ ...h, HttpError: typeof HttpError })));\n");
      await writeFile(join(project, 'required-types.cts'), "import sdk = require('hearth-sdk');\nexport const client: sdk.Client = sdk.createClient({ baseUrl: 'http://127.0.0.1:1' });\n");
      // a consumer without @types/node: only the DOM's fetch (browser or Node)
      const compilerOptions = { noEmit: true, strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2023', 'dom'], types: [], skipLibCheck: false };
      await writeFile(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['first-program.ts', 'required-types.cts'] }));
      await run(line, line.node, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: project });
      const { stdout } = await run(line, line.node, ['required.cjs', a.url], { cwd: project });
      const health = JSON.parse(stdout) as { status?: string; HttpError?: string };
      if (health.status !== 'alive' || health.HttpError !== 'function') throw new Error(`require('hearth-sdk') program printed ${stdout}`);
    });
    await step('the docs’ first program from that project: logs in, lists contexts, receives an event', async () => {
      await writeFile(
        join(project, 'main.mjs'),
        "import { firstChange } from './first-program.mjs';\nconst [url, user, password] = process.argv.slice(2);\nconst r = await firstChange(url, user, password);\nconsole.log('RESULT ' + JSON.stringify({ contexts: r.contexts, type: r.frame.type, contextId: r.frame.contextId }));\n",
      );
      const stop = new AbortController();
      const ran = run(line, line.node, ['main.mjs', a.url, ADMIN.username, ADMIN.password], { cwd: project, timeoutMs: 60_000 });
      try {
        await keepWriting(clientA, kv.contextId, ran, stop.signal);
        const { stdout } = await ran;
        const result = JSON.parse(stdout.split('\n').find((l) => l.startsWith('RESULT '))?.slice(7) ?? 'null') as { contexts: string[]; type: string; contextId: string } | null;
        if (!result || !result.contexts.includes(kv.contextId) || result.type !== 'StateMutation' || result.contextId !== kv.contextId) throw new Error(`the program printed ${stdout}`);
      } finally {
        stop.abort();
      }
    });
    await step('the first program bundles for the browser from the installed package', async () => {
      const bundle = await bundleExample({ resolveDir: project });
      process.stdout.write(`    browser bundle: ${bundle.bytes} bytes minified, ${bundle.gzipBytes} gzipped\n`);
      if (bundle.gzipBytes > 40 * 1024) throw new Error(`the bundle is ${bundle.gzipBytes} bytes gzipped, above 40 KB`);
    });
  } catch (err) {
    for (const [i, n] of nodes.entries()) process.stdout.write(`    node ${'ab'[i]} output (last lines):\n${n.output().trim().split('\n').slice(-20).map((l) => `      ${l}`).join('\n')}\n`);
    throw err;
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
  }
}

/** Node 18, an unsupported line: bin/hearth.js parses there and refuses in one line naming the lines. */
async function checkOldLine(failed: string[]): Promise<void> {
  const node = lineBinary(OLD_LINE);
  if (!existsSync(node)) {
    process.stdout.write(`  FAIL Node ${OLD_LINE} (unsupported): no binary at ${node}: run scripts/fetch-node-lines.sh\n`);
    failed.push(`Node ${OLD_LINE}: not fetched`);
    return;
  }
  const line: Line = { major: OLD_LINE, node, work: ROOT, children: new Set(), env: { PATH: [dirname(node), process.env.PATH ?? ''].join(delimiter) } };
  const expected = /^hearth: Node\.js 18\.\d+\.\d+ is not supported: hearth runs on Node\.js 20\.19\+, 22, 24 or 26\n$/;
  try {
    const r = await run(line, join(ROOT, 'bin', 'hearth.js'), ['--version'], { allowFail: true, timeoutMs: 60_000 });
    if (r.code !== 1 || r.stdout !== '' || !expected.test(r.stderr)) throw new Error(`exit ${r.code}, stdout ${JSON.stringify(r.stdout)}, stderr ${JSON.stringify(r.stderr)}`);
    process.stdout.write(`  ok   Node ${OLD_LINE} (unsupported): bin/hearth.js refuses in one line: ${r.stderr.trim()}\n`);
  } catch (err) {
    process.stdout.write(`  FAIL Node ${OLD_LINE} (unsupported): ${err instanceof Error ? err.message : String(err)}\n`);
    failed.push(`Node ${OLD_LINE}: no one-line refusal`);
  }
}

async function main(): Promise<number> {
  const started = Date.now();
  const passed: string[] = [];
  const failed: string[] = [];
  await checkOldLine(failed);
  for (const major of LINES) {
    const node = lineBinary(major);
    const lineStarted = Date.now();
    let version = '';
    const work = await mkdtemp(join(tmpdir(), `hearth-release-${major}-`));
    const line: Line = { major, node, work, children: new Set(), env: {} };
    try {
      // the line's node first on PATH; nothing of an enclosing npm run or test run leaks in
      const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_') && !k.startsWith('MALLOC_') && k !== 'NODE_OPTIONS' && k !== 'INIT_CWD'));
      line.env = { ...base, PATH: [dirname(node), process.env.PATH ?? ''].join(delimiter), npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? tmpdir(), '.npm') };
      if (!existsSync(node)) throw new Error(`no Node ${major} at ${node}: run scripts/fetch-node-lines.sh`);
      version = (await run(line, node, ['--version'], { timeoutMs: 30_000 })).stdout.trim();
      if (!version.startsWith(`v${major}.`)) throw new Error(`${node} is Node ${version}, not ${major}: run scripts/fetch-node-lines.sh`);
      process.stdout.write(`release check on Node ${version} (${node})\n`);
      await checkLine(line, async (name, f) => {
        const t = Date.now();
        try {
          const r = await f();
          process.stdout.write(`  ok   ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)\n`);
          return r;
        } catch (err) {
          process.stdout.write(`  FAIL ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)\n`);
          throw new Error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
        }
      });
      passed.push(`${version} (${((Date.now() - lineStarted) / 1000).toFixed(0)} s)`);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      process.stdout.write(`  Node ${version || major}: ${message}\n`);
      failed.push(`Node ${version || major}: ${message.split('\n')[0]}`);
    } finally {
      for (const child of line.children) child.kill('SIGKILL');
      await rm(work, { recursive: true, force: true });
    }
  }
  const total = `${((Date.now() - started) / 1000).toFixed(0)} s`;
  if (failed.length) {
    process.stdout.write(`release check: FAILED on ${failed.length} of ${LINES.length} Node.js lines in ${total}: ${failed.join('; ')}\n`);
    return 1;
  }
  process.stdout.write(`release check: passed on Node ${passed.join(', ')} in ${total}\n`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stdout.write(`release check: FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
