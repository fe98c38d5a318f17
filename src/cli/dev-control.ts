/**
 * `hearth dev stop | start | restart <node>` and `hearth dev status` (issue #25 §2): act on a
 * running `hearth dev --nodes N` through its supervisor's control endpoint, found in the cluster's
 * state file (dev-cluster.ts). `status` also asks every running node for its peers and, for each
 * context it holds, its sync state, as one table (one row per node and context).
 *
 * The nodes are development nodes, so `status` reads them with a mock token
 * (`POST /auth/mock-token`, served by development nodes only) and needs no login. A mock token
 * stores a root key on the node (auth-wire §2.4), so the pair is minted once per node and kept in
 * its home (`dev-status-token.json`, 0600), refreshed as any session is; a new key only when the
 * kept pair no longer works (issue #34 §3: every status read added a permanent admin key).
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { createClient, HttpError, MemoryTokenStore, type Client, type Tokens, type TokenStore } from '../client/index.ts';
import { DEFAULT_NODE_NAME } from '../config/defaults.ts';
import { liveCluster, type ClusterState } from './dev-cluster.ts';
import { NodeStartError, UsageError } from './exit.ts';
import { Output } from './output.ts';
import type { GlobalOpts } from './options.ts';

interface ControlOpts extends GlobalOpts {
  home?: string;
  node?: string;
}

const CONTROL_TIMEOUT_MS = 90_000;
const STATUS_TIMEOUT_MS = 10_000;

/**
 * The options of a `dev` subcommand: its own `--node`/`--home` first. `optsWithGlobals()` lets an
 * ancestor's value win, and `hearth dev` has `--node` with a default of its own, so `dev status
 * --node web` read "default" there.
 */
function controlOpts(command: Command): ControlOpts {
  return { ...command.optsWithGlobals(), ...command.opts() } as ControlOpts;
}

async function clusterOf(opts: ControlOpts): Promise<ClusterState> {
  const root = resolve(opts.home ?? process.env.HEARTH_HOME ?? join(homedir(), '.hearth'));
  const prefix = opts.node ?? DEFAULT_NODE_NAME;
  const state = await liveCluster(root, prefix);
  if (!state) throw new UsageError(`no development cluster "${prefix}" is running under ${root}: start one with: hearth dev --nodes <n>${opts.home ? ` --home ${opts.home}` : ''}`);
  return state;
}

async function control(state: ClusterState, method: 'GET' | 'POST', path: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${state.control}${path}`, { method, headers: { 'x-hearth-cluster-token': state.token }, signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS) });
  } catch (err) {
    throw new NodeStartError(`the cluster's supervisor (pid ${state.pid}) does not answer at ${state.control}: ${(err as Error).message}`);
  }
  const body = (await res.json().catch(() => ({}))) as { error?: string };
  if (!res.ok) throw new UsageError(body.error ?? `the supervisor answered ${res.status}`);
  return body;
}

/** `2` names `<prefix>-2`; a full name is taken as it is. */
function nodeName(state: ClusterState, given: string): string {
  const byIndex = /^\d+$/.test(given) ? state.nodes[Number(given) - 1]?.name : undefined;
  return byIndex ?? given;
}

interface NodeRow {
  node: string;
  state: string;
  url: string;
  pid?: number | null;
  exitCode?: number | null;
}

interface StatusRow {
  node: string;
  state: string;
  url: string;
  peers: number | null;
  context: string | null;
  sync: string | null;
  error?: string;
}

/** A context's sync state in a few words (docs/sync.md). */
function syncWords(s: { state?: string; caughtUp?: boolean; behind?: number; reasons?: { reason: string }[] } | undefined): string {
  if (!s) return 'no network';
  if (s.caughtUp) return `caught up (${s.state})`;
  const why = s.reasons?.map((r) => r.reason).join(', ');
  return `behind ${s.behind ?? '?'} (${s.state}${why ? `: ${why}` : ''})`;
}

/** The status pair of one node, in a file of its home, written whole (rename) so a reader never sees half. */
export class StatusTokenFile implements TokenStore {
  constructor(private readonly path: string) {}

  async get(): Promise<Tokens | null> {
    try {
      const t = JSON.parse(await readFile(this.path, 'utf8')) as Tokens;
      return typeof t.accessToken === 'string' && typeof t.refreshToken === 'string' ? t : null;
    } catch {
      return null;
    }
  }

  async set(tokens: Tokens): Promise<void> {
    const tmp = `${this.path}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(tokens)}\n`, { mode: 0o600 });
    await rename(tmp, this.path);
  }

  async clear(): Promise<void> {
    await this.set({ accessToken: '', refreshToken: '' });
  }
}

export const STATUS_TOKEN_FILE = 'dev-status-token.json';

/** Runs `read` with the node's kept status pair; mints one (a new mock root key) only when it has none that works. */
async function withStatusToken<T>(client: Client, store: TokenStore, read: () => Promise<T>): Promise<T> {
  if ((await store.get())?.accessToken) {
    try {
      return await read();
    } catch (err) {
      if (!(err instanceof HttpError) || err.status !== 401) throw err;
    }
  }
  await client.auth.mockToken({ client_name: 'hearth dev status', permissions: ['admin'] });
  return read();
}

async function statusOf(n: NodeRow, home: string | undefined): Promise<StatusRow[]> {
  const base = { node: n.node, state: n.state, url: n.url };
  if (n.state !== 'running') return [{ ...base, peers: null, context: null, sync: null }];
  const store: TokenStore = home ? new StatusTokenFile(join(home, STATUS_TOKEN_FILE)) : new MemoryTokenStore();
  const client: Client = createClient({ baseUrl: n.url, tokenStore: store, timeoutMs: STATUS_TIMEOUT_MS });
  try {
    const [{ count }, contexts] = await withStatusToken(client, store, () => Promise.all([client.admin.peers(), client.contexts.list()]));
    if (!contexts.length) return [{ ...base, peers: count, context: null, sync: null }];
    // the sync state as the node reports it for each context it holds (hearth's bulk sync-status
    // route; a node without a network has none)
    const statuses = await client.contexts.syncStatuses().catch(() => []);
    const byId = new Map(statuses.map((s) => [s.contextId, s]));
    return contexts.map((c) => ({ ...base, peers: count, context: c.id, sync: syncWords(byId.get(c.id)) }));
  } catch (err) {
    return [{ ...base, peers: null, context: null, sync: null, error: (err as Error).message }];
  }
}

function options(cmd: Command): Command {
  return cmd
    .option('--home <dir>', 'root of node homes (default ~/.hearth, or $HEARTH_HOME)')
    .option('--node <name>', 'the cluster: its nodes are <name>-1 … (as given to hearth dev --nodes; default "default")');
}

export function registerDevControlCommands(dev: Command): void {
  for (const verb of ['stop', 'start', 'restart'] as const) {
    const what = { stop: 'stop one node of a running hearth dev --nodes cluster (the others keep running)', start: 'start a stopped node of the cluster again (it catches up with the others)', restart: 'stop one node of the cluster and start it again' }[verb];
    options(dev.command(verb).description(what).argument('<node>', 'the node: its name (default-2) or its number (2)')).action(async (given: string, _o: unknown, command: Command) => {
      const opts = controlOpts(command);
      const state = await clusterOf(opts);
      const name = nodeName(state, given);
      const r = (await control(state, 'POST', `/nodes/${encodeURIComponent(name)}/${verb}`)) as NodeRow;
      const out = new Output(opts.output ?? 'table');
      const done = { stop: 'stopped', start: 'started', restart: 'restarted' }[verb];
      out.result(r, () => `${name} ${done}${r.state === 'running' ? `: ${r.url}` : ''}`);
    });
  }

  options(dev.command('status').description('the nodes of a running hearth dev --nodes cluster: state, URL, peers and each context\'s sync state')).action(async (_o: unknown, command: Command) => {
    const opts = controlOpts(command);
    const state = await clusterOf(opts);
    const nodes = (await control(state, 'GET', '/nodes')) as NodeRow[];
    const homes = new Map(state.nodes.map((m) => [m.name, m.home]));
    const rows = (await Promise.all(nodes.map((n) => statusOf(n, homes.get(n.node))))).flat();
    const out = new Output(opts.output ?? 'table', process.stdout, { wide: opts.wide });
    out.table(rows, [
      { header: 'node', value: (r) => r.node },
      { header: 'state', value: (r) => r.state },
      { header: 'url', value: (r) => r.url },
      { header: 'peers', value: (r) => r.peers },
      { header: 'context', value: (r) => r.context ?? (r.error ? `(${r.error})` : r.state === 'running' ? '(none)' : null) },
      { header: 'sync', value: (r) => r.sync },
    ]);
  });
}
