/**
 * `hearth events watch` (issue #6; admin spec "Events", docs/events.md): follows the node's live
 * event stream over SSE with the SDK's {@link EventStream} (reconnects, resumes with
 * `Last-Event-ID`, re-subscribes) and prints one line per frame. `hearth context watch` uses the
 * same loop for one context.
 *
 * Output is the one exception to "one JSON document per command": with `--output json` each frame
 * is one JSON object on its own line (NDJSON; byte fields decoded as text or hex, or as the node
 * sent them with `--raw`), so a consumer can act on events as they come. Notes (subscribed,
 * reconnected, gaps) go to stderr. `--count`
 * ends the watch after that many frames; Ctrl-C ends it cleanly (exit 0).
 */
import type { Command } from 'commander';
import { displayBytes, EventStream, HttpError, stringifyJson, type StreamFrame } from '../client/index.ts';
import { notFound } from '../errors.ts';
import { collectId, collectRef, parseCount, resolveRef, type Ref } from './context-args.ts';
import { connectOptions, withCli, type Cli, type ConnectOpts } from './connect.ts';

export interface WatchTarget {
  contextIds: string[];
  groupIds: string[];
  /** stop after this many frames */
  count?: number;
}

/**
 * Streams frames for `target` until `count` frames were printed, the CLI's signal aborts (Ctrl-C)
 * or the node refuses the stream or the subscription (rejects with that error). Resolves with the
 * number of frames printed.
 */
export async function watchEvents(cli: Cli, target: WatchTarget): Promise<number> {
  // context aliases, read once: a line names a context by its alias (best effort, none when refused)
  const aliases = new Map<string, string>();
  if (!cli.out.json) {
    const listed = await cli.client.aliases.list('context', { signal: cli.signal }).catch(() => ({}) as Record<string, string>);
    for (const [name, id] of Object.entries(listed).sort(([a], [b]) => a.localeCompare(b))) if (!aliases.has(id)) aliases.set(id, name);
  }
  return streamEvents(cli, target, { aliases, wide: cli.out.options.wide });
}

function streamEvents(cli: Cli, target: WatchTarget, names: LineNames): Promise<number> {
  const stream = new EventStream(cli.client.http);
  const note = (text: string) => {
    if (!cli.out.json) process.stderr.write(`${text}\n`);
  };
  let printed = 0;
  let subscribed = false;
  return new Promise<number>((resolve, reject) => {
    let settled = false;
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      stream.stop();
      cli.signal.removeEventListener('abort', onAbort);
      if (err === undefined) resolve(printed);
      else reject(err);
    };
    const onAbort = () => finish();
    if (cli.signal.aborted) return finish();
    cli.signal.addEventListener('abort', onAbort, { once: true });

    stream.on('connect', ({ reconnect }) => {
      if (subscribed) {
        note(reconnect ? 'reconnected; missed frames are replayed' : 'reconnected (new session)');
        return;
      }
      subscribed = true;
      // Subscribing once the session is open tells what the node kept: ids it does not hold, or
      // that this token may not observe, are dropped silently by the node (docs/events.md).
      stream
        .subscribe({ contextIds: target.contextIds, groupIds: target.groupIds })
        .then((kept) => {
          const dropped = [
            ...target.contextIds.filter((id) => !kept?.contexts.includes(id)).map((id) => `context ${id}`),
            ...target.groupIds.filter((id) => !kept?.groups.includes(id)).map((id) => `group ${id}`),
          ];
          if (kept && kept.contexts.length + kept.groups.length === 0) {
            return finish(notFound(`the node keeps none of the requested subscriptions (${dropped.join(', ')}): it does not hold them, or this login may not observe them`));
          }
          for (const d of dropped) note(`not watching ${d}: the node does not hold it, or this login may not observe it`);
          note(`watching ${plural(kept?.contexts.length ?? 0, 'context')} and ${plural(kept?.groups.length ?? 0, 'group')}; Ctrl-C to stop`);
        })
        .catch((err: unknown) => finish(err));
    });
    stream.on('frame', (frame) => {
      if (settled) return;
      process.stdout.write(`${cli.out.json ? stringifyJson(cli.out.display(frame)) : frameLine(frame, new Date(), names)}\n`);
      printed++;
      if (target.count !== undefined && printed >= target.count) finish();
    });
    stream.on('gap', (gap) => {
      const text = `gap: the node could not replay every frame after ${gap.resumedAfter} (${gap.reason}${gap.missed === null ? '' : `, ${gap.missed} missed`})`;
      process.stderr.write(cli.out.json ? `${stringifyJson({ type: 'gap', ...gap })}\n` : `${text}\n`);
    });
    stream.on('close', ({ reason }) => note(`the node ended the stream: ${reason}`));
    stream.on('disconnect', () => note('connection lost; reconnecting'));
    stream.on('error', (err) => {
      // A refusal (not logged in, forbidden, unknown session) will not heal by reconnecting.
      if (err instanceof HttpError && err.status >= 400 && err.status < 500) finish(err);
    });
    stream.start();
  });
}

/** How a line names ids: a context by its alias when it has one; other ids cut to 12 characters unless `wide`. */
export interface LineNames {
  aliases?: ReadonlyMap<string, string>;
  wide?: boolean;
}

const FULL_ID = /\b[0-9a-f]{64}\b/g;
const SHORT = 12;

/**
 * `<time>  context <alias|id>  <type>  <details>` — one line per frame. Ids are cut to 12 characters
 * and a context with an alias is named by it (issue #34 §3: full ids made ~230-character lines);
 * `--wide` prints them in full, `--output json` the frame as sent.
 */
export function frameLine(frame: StreamFrame, now = new Date(), names: LineNames = {}): string {
  const id = (full: string) => (names.wide ? full : `${full.slice(0, SHORT)}…`);
  const ctx = (full: string) => names.aliases?.get(full) ?? id(full);
  const where = 'contextId' in frame ? `context ${ctx(frame.contextId)}` : `group ${id((frame as { groupId: string }).groupId)}`;
  const rest = details(frame);
  return `${now.toISOString()}  ${where}  ${frame.type}  ${names.wide ? rest : rest.replace(FULL_ID, (m) => id(m))}`.trimEnd();
}

function details(frame: StreamFrame): string {
  const data = frame.data as Record<string, unknown>;
  if (frame.type === 'StateMutation') {
    const events = Array.isArray(data.events) ? (data.events as { kind: string; data?: number[] }[]) : [];
    const shown = events.map((e) => (Array.isArray(e.data) && e.data.length ? `${e.kind} ${displayBytes(e.data)}` : e.kind));
    return [`root ${String(data.newRoot)}`, ...shown].join('  ');
  }
  if (frame.type === 'Ephemeral') {
    const state = Array.isArray(data.state) ? ` ${displayBytes(data.state as number[])}` : '';
    return `author ${String(data.author)}${data.removed ? ' removed' : state}`;
  }
  return data && Object.keys(data).length ? stringifyJson(data) : '';
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

interface WatchFlags extends ConnectOpts {
  context?: Ref[];
  group?: string[];
  count?: number;
}

export function registerEventsCommands(program: Command): void {
  const events = program.command('events').description('the live event stream (state mutations, sync status, presence, group membership)');

  connectOptions(
    events
      .command('watch')
      .description('print events as they happen, one line each (NDJSON with --output json); Ctrl-C to stop')
      .option('--context <id|alias>', 'a context to watch (repeatable; default: every context the node holds)', collectRef)
      .option('--group <id>', 'a group or namespace to watch (repeatable)', collectId)
      .option('--count <n>', 'stop after n events', parseCount),
  ).action(
    withCli<WatchFlags>(async (cli, _args, flags) => {
      let contextIds = await Promise.all((flags.context ?? []).map((ref) => resolveRef(cli, ref, 'context', '--context')));
      // A context the node does not hold is refused with the node's 404 rather than watched in
      // silence (the stream may keep ids of contexts it has not heard of).
      await Promise.all(contextIds.map((id) => cli.client.contexts.get(id, { signal: cli.signal })));
      const groupIds = flags.group ?? [];
      if (contextIds.length === 0 && groupIds.length === 0) {
        contextIds = (await cli.client.contexts.list({ signal: cli.signal })).map((c) => c.id);
        if (contextIds.length === 0) throw notFound('this node holds no contexts to watch; create one with: hearth context create, or pass --group <id>');
      }
      await watchEvents(cli, { contextIds: [...new Set(contextIds)], groupIds: [...new Set(groupIds)], count: flags.count });
    }),
  );
}
