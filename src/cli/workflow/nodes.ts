/**
 * The local nodes a workflow runs on: `count` hearth development nodes started the way
 * `hearth dev --nodes N` starts them (src/cli/dev-cluster.ts: homes, bootstrap lists, one process
 * each), on free loopback ports, in fresh homes under a temporary folder (or `--nodes-dir`), with
 * admin credentials made for this run. Each node gets an SDK client logged in as that admin, whose
 * last request and answer are kept so a failing step can show them.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { createClient, MemoryTokenStore, type Client } from '../../client/index.ts';
import { launch, listening, prepareCluster, stopOne, type Supervised } from '../dev-cluster.ts';

/** A call as the runner saw it go out and come back (bodies cut to a readable size). */
export interface Exchange {
  request: string;
  answer: string;
}

export interface LocalNode {
  name: string;
  url: string;
  client: Client;
  pid: number | undefined;
  /** set when the process exited while the run still needed it */
  exited?: string;
  /** the last call made to this node */
  last?: Exchange;
}

export interface LocalNodes {
  nodes: Map<string, LocalNode>;
  /** the admin made for this run (shown only when --keep leaves the nodes up) */
  admin: { username: string; password: string };
  stop(): Promise<void>;
}

const BODY_LIMIT = 600;
const cut = (text: string) => (text.length > BODY_LIMIT ? `${text.slice(0, BODY_LIMIT)}… (${text.length} bytes)` : text);

/** A fetch that remembers each call on `node.last`; auth bodies (credentials, tokens) are never kept. */
function recordingFetch(node: { last?: Exchange }): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const path = new URL(url).pathname;
    const secret = path.startsWith('/auth/') || path.startsWith('/admin/');
    const body = typeof init?.body === 'string' ? init.body : init?.body ? '<bytes>' : '';
    // a group signing key's secret is never kept either (the node's answer never repeats it)
    const shown = !body ? '' : secret || path.endsWith('/signing-key') ? ' <secret withheld>' : ` ${cut(body)}`;
    const request = `${init?.method ?? 'GET'} ${path}${shown}`;
    node.last = { request, answer: '(no answer)' };
    try {
      const res = await fetch(input, init);
      const text = secret ? '' : await res.clone().text().catch(() => '');
      node.last = { request, answer: `${res.status}${text ? ` ${cut(text)}` : ''}` };
      return res;
    } catch (err) {
      node.last = { request, answer: `no answer: ${(err as Error).message}` };
      throw err;
    }
  };
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ host: '127.0.0.1', port }, () => srv.close(() => resolve(true)));
  });
}

/** A first port such that `n` HTTP ports from it, and `n` swarm ports from it + 1000, are free. */
async function freeBase(n: number): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = 30_000 + Math.floor(Math.random() * 25_000);
    const ports = Array.from({ length: n }, (_, i) => [base + i, base + 1000 + i]).flat();
    let ok = true;
    for (const p of ports) if (!(ok = await portFree(p))) break;
    if (ok) return base;
  }
  throw new Error(`found no ${n} free loopback ports`);
}

export interface StartOptions {
  names: string[];
  /** where the homes go (each node `<root>/<name>`) */
  root: string;
  /** seconds each node has to listen */
  deadlineS: number;
  /** the node processes' log lines go here */
  logSink: NodeJS.WritableStream;
  /** a started node exited on its own */
  onExit: (node: LocalNode, how: string) => void;
  /** receives the function that stops every node launched so far, before the first one starts (Ctrl-C during the start) */
  onStopper?: (stop: () => Promise<void>) => void;
}

/** Starts and logs in to every node; on any failure stops those started and rethrows. */
export async function startNodes(opts: StartOptions): Promise<LocalNodes> {
  const prefix = commonPrefix(opts.names);
  const base = await freeBase(opts.names.length);
  const adminUser = 'workflow';
  const adminPassword = randomBytes(18).toString('base64url');
  const cluster = { nodes: opts.names.length, home: opts.root, node: prefix, port: base, swarmPort: base + 1000, adminUser, adminPassword, logLevel: undefined };
  const members = await prepareCluster(cluster);
  const sup: Supervised[] = members.map((m) => ({ ...m, state: 'stopped' }));
  const nodes = new Map<string, LocalNode>();
  let stopping = false;
  const stop = async () => {
    stopping = true;
    await Promise.all(sup.map(stopOne));
  };
  opts.onStopper?.(stop);
  try {
    await Promise.all(
      sup.map(async (r, i) => {
        if (stopping) throw new Error('the run was stopped before the nodes started');
        launch(r, cluster);
        const ready = listening(r, false, opts.logSink);
        const deadline = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${opts.names[i]} did not start within wait_timeout (${opts.deadlineS} s)`)), opts.deadlineS * 1000).unref());
        const line = await Promise.race([ready, deadline]);
        r.state = 'running';
        const url = typeof line.url === 'string' ? line.url : `http://127.0.0.1:${r.port}`;
        const node: LocalNode = { name: opts.names[i]!, url, pid: r.child?.pid, client: undefined as unknown as Client };
        node.client = createClient({ baseUrl: url, tokenStore: new MemoryTokenStore(), fetch: recordingFetch(node), timeoutMs: 60_000 });
        r.child!.once('exit', (code, signal) => {
          if (stopping) return;
          node.exited = code !== null ? `exited with code ${code}` : `was killed by ${signal}`;
          opts.onExit(node, node.exited);
        });
        await node.client.auth.login({ username: adminUser, password: adminPassword });
        nodes.set(node.name, node);
      }),
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { nodes, stop, admin: { username: adminUser, password: adminPassword } };
}

/**
 * dev-cluster names its nodes `<prefix>-1 … -N`, as merobox does: the prefix of the names. A
 * workflow naming its nodes otherwise (merobox's named form) gets them in that order all the same.
 */
function commonPrefix(names: string[]): string {
  const m = /^(.*)-1$/.exec(names[0] ?? '');
  const prefix = m?.[1];
  return prefix && names.every((n, i) => n === `${prefix}-${i + 1}`) ? prefix : 'workflow-node';
}
