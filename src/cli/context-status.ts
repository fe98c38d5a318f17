/**
 * `hearth context status <context> [--wait [--within <s>]]` (issue #13 item 5): the honest sync
 * status of a context on this node — caught up or not, how far behind, why, and which peers it last
 * heard from. `--wait` polls until the context is caught up (exit 0) or the deadline passes (exit 1),
 * showing progress on a terminal. The status comes from hearth's own route `GET /contexts/{id}/sync`
 * (the spec's Context carries none); a node without a network answers it 503, said in words here.
 */
import type { Command } from 'commander';
import { HttpError, type Client, type Context, type ContextSyncStatus } from '../client/index.ts';
import { contextRefArg, resolveRef, type Ref } from './context-args.ts';
import { HearthError } from '../errors.ts';
import { connectOptions, positiveInt, withCli, type Cli, type ConnectOpts } from './connect.ts';
import { renderRecord } from './output.ts';

const ago = (iso: string) => `${Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000))} s ago`;

/** A context and its sync status; `sync` is undefined on a node without a network (`noSync` says why). */
export interface ContextWithSync {
  context: Context;
  sync?: ContextSyncStatus;
  noSync?: string;
}

/** Reads the context and its sync status; a 503 of the status route (no network) is an answer, not a failure. */
export async function readWithSync(client: Client, id: string, signal?: AbortSignal): Promise<ContextWithSync> {
  const [context, status] = await Promise.all([
    client.contexts.get(id, { signal }),
    client.contexts.syncStatus(id, { signal }).then(
      (sync) => ({ sync }),
      (err: unknown) => {
        if (err instanceof HttpError && err.status === 503) return { noSync: (err.body as { error?: string } | undefined)?.error ?? 'this node runs without a network' };
        throw err;
      },
    ),
  ]);
  return { context, ...status };
}

export function renderStatus({ context: c, sync: s, noSync }: ContextWithSync): string {
  const base = { context: c.id, 'state hash': c.contextStateHash === 'f'.repeat(64) ? 'none yet (not initialized on this node)' : c.contextStateHash, 'dag heads': String(c.dagHeads?.length ?? 0) };
  if (!s) return renderRecord({ ...base, sync: noSync ?? 'this node runs without a network: nothing to sync with' });
  const removed = s.reasons.find((r) => r.reason === 'removed');
  return renderRecord({
    ...base,
    // said first: nothing else about the context matters much on a node that was removed from it
    ...(removed ? { removed: `yes: ${removed.detail}` } : {}),
    state: s.state,
    'caught up': s.caughtUp ? 'yes' : 'no',
    behind: s.behind === 0 ? '0' : `${s.behind} delta(s) known and not held yet`,
    pending: String(s.pending),
    quarantined: String(s.quarantined),
    why: s.reasons.length === 0 ? '-' : s.reasons.map((r) => `${r.reason}: ${r.detail}`).join('; '),
    peers: s.peers.length === 0 ? 'none heard from' : s.peers.map((p) => `${p.peer.slice(0, 12)}… (${ago(p.lastHeardAt)})`).join(', '),
    'last sync': s.lastSyncAt ? ago(s.lastSyncAt) : 'never',
    ...(s.lastError ? { 'last error': s.lastError } : {}),
  });
}

export function registerContextStatusCommand(context: Command): void {
  connectOptions(
    context
      .command('status')
      .description('show whether this node is caught up with a context, how far behind and why')
      .argument('<context>', 'context id, unique prefix (6+ hex), alias or @last', contextRefArg())
      .option('--wait', 'poll until the context is caught up (exit 1 when the deadline passes)')
      .option('--within <seconds>', 'deadline of --wait', positiveInt('seconds'), 60),
  ).action(
    withCli<ConnectOpts & { wait?: boolean; within: number }>(async (cli: Cli, [ref], flags) => {
      const id = await resolveRef(cli, ref as unknown as Ref, 'context', '<context>');
      const read = () => readWithSync(cli.client, id, cli.signal);
      let c = await read();
      if (flags.wait) {
        const progress = cli.progress('waiting until caught up');
        const end = Date.now() + flags.within * 1000;
        while (!c.sync?.caughtUp && Date.now() < end && !cli.signal.aborted) {
          progress.phase(`${c.sync?.state ?? 'no network'}, behind ${c.sync?.behind ?? '?'}`);
          await new Promise((r) => setTimeout(r, 500));
          c = await read();
        }
        progress.done(c.sync?.caughtUp ? 'caught up' : 'not caught up');
        if (!c.sync?.caughtUp) throw new HearthError('unavailable', `context ${id} is not caught up after ${flags.within} s (${describeBehind(c.sync)})`);
      }
      cli.out.result({ contextId: c.context.id, contextStateHash: c.context.contextStateHash, sync: c.sync ? withoutId(c.sync) : null }, () => renderStatus(c));
    }),
  );
}

/** The status as `--output json` has always shown it: the context id is said once, beside it. */
function withoutId(s: ContextSyncStatus): Omit<ContextSyncStatus, 'contextId'> {
  const { contextId: _id, ...rest } = s;
  return rest;
}

const describeBehind = (s: ContextSyncStatus | undefined) => (s ? s.reasons.map((r) => r.reason).join(', ') || s.state : 'no network');
