import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpError, NetworkError } from '../client/index.ts';
import { badRequest, notFound } from '../errors.ts';
import { initHome, resolveHome } from '../config/home.ts';
import { localNodeAt } from './connect.ts';
import { describeFailure, EXIT_AUTH, EXIT_NODE, EXIT_USAGE, UsageError } from './exit.ts';
import { Output, renderTable } from './output.ts';
import { Profiles, ProfileTokenStore } from './profiles.ts';
import { Progress } from './progress.ts';
import { confirm, readSecretFrom } from './prompt.ts';

const dirs: string[] = [];
const tempDir = async () => {
  const d = await mkdtemp(join(tmpdir(), 'hearth-cli-core-'));
  dirs.push(d);
  return d;
};
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const httpError = (status: number, body: unknown) =>
  new HttpError({ method: 'GET', url: 'http://n/x', status, statusText: '', headers: new Headers(), bodyText: JSON.stringify(body), body });

describe('profiles', () => {
  it('writes 0600 files in a 0700 directory, and the token store persists rotated pairs', async () => {
    const root = await tempDir();
    const profiles = new Profiles(root);
    const store = new ProfileTokenStore(profiles, { name: 'work', node: 'http://127.0.0.1:2528' });
    await store.set({ accessToken: 'a1', refreshToken: 'r1' });
    expect((await stat(profiles.path('work'))).mode & 0o777).toBe(0o600);
    expect((await stat(profiles.dir)).mode & 0o777).toBe(0o700);
    expect((await profiles.read('work')).tokens).toEqual({ accessToken: 'a1', refreshToken: 'r1' });
    await store.clear();
    expect(await profiles.read('work')).toEqual({ name: 'work', node: 'http://127.0.0.1:2528' });
    expect((await profiles.list()).map((p) => p.name)).toEqual(['work']);
  });

  it('adopts a pair another process rotated into the file', async () => {
    const profiles = new Profiles(await tempDir());
    const mine = new ProfileTokenStore(profiles, { name: 'p', node: 'http://n' });
    await mine.set({ accessToken: 'a1', refreshToken: 'r1' });
    await new ProfileTokenStore(profiles, await profiles.read('p')).set({ accessToken: 'a2', refreshToken: 'r2' });
    expect(await mine.get()).toEqual({ accessToken: 'a2', refreshToken: 'r2' });
  });

  it('refuses names that could escape the directory', () => {
    expect(() => new Profiles('/tmp').path('../x')).toThrow(UsageError);
    expect(() => new Profiles('/tmp').path('')).toThrow(/profile name/);
  });

  it('a damaged profile file is a usage error that names the way out', async () => {
    const profiles = new Profiles(await tempDir());
    await profiles.write({ name: 'p' });
    await writeFile(profiles.path('p'), '{not json');
    await expect(profiles.read('p')).rejects.toThrow(/hearth logout --profile p/);
  });
});

describe('exit codes', () => {
  it('maps failures to usage, auth and node classes with the node message', () => {
    expect(describeFailure(new UsageError('bad flag')).code).toBe(EXIT_USAGE);
    expect(describeFailure(badRequest('bad id')).code).toBe(EXIT_USAGE);
    expect(describeFailure(notFound('gone')).code).toBe(EXIT_NODE);
    const unauth = describeFailure(httpError(401, { error: 'token expired' }), 'work');
    expect(unauth).toMatchObject({ code: EXIT_AUTH, message: 'token expired (HTTP 401)', hint: 'hearth login --profile work' });
    const denied = httpError(403, { error: 'needs admin' });
    Object.defineProperty(denied, 'authError', { value: 'permission_denied' });
    expect(describeFailure(denied).code).toBe(EXIT_AUTH);
    expect(describeFailure(httpError(403, { error: 'the owner cannot leave' })).code).toBe(EXIT_NODE);
    expect(describeFailure(httpError(409, { error: 'exists' }))).toMatchObject({ code: EXIT_NODE, message: 'exists (HTTP 409)', status: 409 });
    // node-down advice: start the local node serving that address; hearth dev only for a local
    // address no home serves; never for a remote node (issue #34 §3)
    const down = (url: string, local?: string) => describeFailure(new NetworkError('GET', url, new Error('ECONNREFUSED')), undefined, local).hint;
    expect(down('http://127.0.0.1:2528/x')).toBe('is the node running? start one with: hearth dev (or pass --node <url|name>)');
    expect(down('http://127.0.0.1:2600/x', 'b')).toBe('is the node running? start it with: hearth run --node b');
    expect(down('http://n.example:2528/x')).toBe('is the node running, and reachable from here? (or pass --node <url|name>)');
  });

  it('finds the local node home that serves an address, for that advice', async () => {
    const root = await tempDir();
    await initHome(resolveHome({ home: root, node: 'b' }), { name: 'b', serverPort: 2600 });
    expect(await localNodeAt('http://127.0.0.1:2600/admin-api/health', root)).toBe('b');
    expect(await localNodeAt('http://127.0.0.1:2601/admin-api/health', root)).toBeUndefined();
  });
});

describe('output', () => {
  it('prints tables with aligned columns, and JSON with exact u64 values', () => {
    const rows = [{ id: 'a', n: 1 }, { id: 'bbbb', n: 22 }];
    expect(renderTable(rows, [{ header: 'id', value: (r) => r.id }, { header: 'n', value: (r) => r.n }])).toBe('ID    N\na     1\nbbbb  22');
    const sink = new PassThrough();
    let text = '';
    sink.on('data', (c) => (text += c));
    new Output('json', sink).result({ big: 18446744073709551615n }, () => 'unused');
    expect(text).toBe('{"big":18446744073709551615}\n');
  });
});

describe('progress', () => {
  it('prints a line per tenth in lines mode, and nothing for JSON output or a pipe', () => {
    const lines: string[] = [];
    const sink = { isTTY: false, write: (t: string) => lines.push(t) };
    const p = new Progress('upload', { sink, env: { HEARTH_PROGRESS: 'lines' } });
    for (let done = 0; done <= 100; done += 5) p.update(done, 100);
    p.done();
    expect(lines.length).toBe(12); // 0 %, 10 % … 100 %, done
    expect(lines[5]).toBe('upload: 50% 50 B / 100 B\n');
    const quiet: string[] = [];
    new Progress('x', { sink: { isTTY: true, write: (t: string) => quiet.push(t) }, json: true, env: {} }).update(1, 2);
    new Progress('x', { sink: { isTTY: false, write: (t: string) => quiet.push(t) }, env: {} }).update(1, 2);
    expect(quiet).toEqual([]);
  });
});

describe('prompts', () => {
  const noTerminal = () => ({ stdin: Object.assign(new PassThrough(), { isTTY: false }) as never, stderr: process.stderr });

  it('confirm passes with --yes and refuses without a terminal', async () => {
    await expect(confirm('Delete it?', true, noTerminal())).resolves.toBeUndefined();
    await expect(confirm('Delete it?', false, noTerminal())).rejects.toThrow(/pass --yes/);
  });

  it('reads a secret from a file first, then stdin, then the environment, never guessing', async () => {
    const file = join(await tempDir(), 'pw');
    await writeFile(file, 'from-file\n');
    expect(await readSecretFrom({ label: 'password', file, env: ['HEARTH_TEST_PW'] }, noTerminal())).toBe('from-file');
    const term = noTerminal();
    (term.stdin as unknown as PassThrough).end('from-stdin\nrest\n');
    expect(await readSecretFrom({ label: 'password', stdin: true }, term)).toBe('from-stdin');
    process.env.HEARTH_TEST_PW = 'from-env';
    try {
      expect(await readSecretFrom({ label: 'password', env: ['HEARTH_TEST_PW'] }, noTerminal())).toBe('from-env');
    } finally {
      delete process.env.HEARTH_TEST_PW;
    }
    await expect(readSecretFrom({ label: 'password', env: ['HEARTH_TEST_PW'] }, noTerminal())).rejects.toThrow(/--password-file/);
    await expect(readSecretFrom({ label: 'password', file: join(file, 'missing') }, noTerminal())).rejects.toThrow(/cannot read password file/);
    expect(await readFile(file, 'utf8')).toBe('from-file\n');
  });
});
