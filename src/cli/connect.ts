/**
 * The shared part of every operator command (issue #6 CLI): the connection options, which node
 * and profile a command talks to, the SDK client with the profile's tokens, output, confirmation,
 * progress, and the one place a failure becomes a message and an exit code.
 *
 * Which node: `--url`, else `--node` (a URL, or the name of a local node home: the address it is
 * listening on now, else its config.toml's), then `$HEARTH_NODE`, then the profile's node, then
 * the local `default` node, then `http://127.0.0.1:2528`; `--port` replaces the port of whichever
 * was chosen. A profile's tokens are used only with the node they were issued by.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readdir, readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { createClient, MemoryTokenStore, NetworkError, type Client } from '../client/index.ts';
import { loadConfig } from '../config/config.ts';
import { DEFAULT_NODE_NAME, DEFAULT_SERVER_PORT } from '../config/defaults.ts';
import { resolveHome } from '../config/home.ts';
import { describeFailure, UsageError } from './exit.ts';
import { httpFetch } from './http-fetch.ts';
import { Output } from './output.ts';
import type { GlobalOpts } from './options.ts';
import { Profiles, ProfileTokenStore, type Profile } from './profiles.ts';
import { confirm } from './prompt.ts';
import { Progress } from './progress.ts';
import { RecentRefs, type Recent, type RememberedKind } from './recent.ts';
import { refContext, resolveAll } from './refs.ts';

export interface ConnectOpts extends GlobalOpts {
  node?: string;
  url?: string;
  port?: number;
  profile?: string;
  home?: string;
  timeout?: number;
  yes?: boolean;
}

export interface Cli {
  client: Client;
  out: Output;
  nodeUrl: string;
  profile: Profile;
  profiles: Profiles;
  /** aborted on Ctrl-C, so a long call ends cleanly */
  signal: AbortSignal;
  /** resolves when confirmed (or `--yes`); otherwise a usage error */
  confirm(question: string): Promise<void>;
  progress(label: string): Progress;
  /** remembers an id this command created, for `@last` (saved when the command succeeds) */
  remember(kind: RememberedKind, id: string): void;
  /** `@last` of this kind names nothing any more (the command deleted it) */
  forget(kind: RememberedKind): void;
  /** what `@last` names for this profile and node */
  recent: RecentRefs;
  /** remembered so far by this command */
  remembered: Recent;
}

/** Thrown after a failure was printed: carries only the exit code. */
export class Reported extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

export const DEFAULT_TIMEOUT_MS = 30_000;

/** A commander parser for a positive whole number (`unit` names it in the refusal). */
export function positiveInt(unit: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError(`must be a positive whole number of ${unit}`);
    return n;
  };
}

export const parseMs = positiveInt('milliseconds');

/** A commander parser for a TCP port (0 lets the system choose, where that makes sense). */
export function portArg(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return n;
}

function urlArg(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be a URL such as http://127.0.0.1:2528');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('must be an http(s) URL');
  return value.replace(/\/+$/, '');
}

/** The options of a command that works on a local node home (`init`, `run`, `config …`). */
export function localNodeOptions(cmd: Command): Command {
  return cmd
    .option('--home <dir>', 'root of node homes (default ~/.hearth, or $HEARTH_HOME)')
    .option('--node <name>', 'node name: its home is <root>/<name>', DEFAULT_NODE_NAME);
}

/** Adds the connection options to an operator command. */
export function connectOptions(cmd: Command, opts: { destructive?: boolean } = {}): Command {
  cmd
    .option('--node <url|name>', 'node URL, or the name of a local node home (default: the profile\'s node)')
    .option('--url <url>', 'the node\'s URL, whatever --node names', urlArg)
    .option('--port <port>', 'the node\'s port, replacing the one --node (or the profile) gives', portArg)
    .option('--profile <name>', 'connection profile (default $HEARTH_PROFILE or "default")')
    .option('--home <dir>', 'root of node homes and profiles (default ~/.hearth, or $HEARTH_HOME)')
    .option('--timeout <ms>', 'deadline of each request to the node', parseMs, DEFAULT_TIMEOUT_MS);
  if (opts.destructive) cmd.option('-y, --yes', 'do not ask for confirmation');
  return cmd;
}

export function homeRoot(home?: string): string {
  return home ?? process.env.HEARTH_HOME ?? join(homedir(), '.hearth');
}

/** Written by a running node into its home (`hearth run | dev`): where it listens, and its process. */
export const LISTENING_FILE = 'listening.json';

/** The address a node home's node is listening on now, if it is running (its process is alive). */
async function listeningUrl(dir: string): Promise<string | undefined> {
  try {
    const { url, pid } = JSON.parse(await readFile(join(dir, LISTENING_FILE), 'utf8')) as { url?: unknown; pid?: unknown };
    if (typeof url !== 'string' || typeof pid !== 'number') return undefined;
    process.kill(pid, 0); // throws when no such process: a stale file
    return url;
  } catch {
    return undefined;
  }
}

/** A URL as given, or the local node home of that name (where it listens now, else its configured host and port). */
export async function resolveNodeUrl(value: string | undefined, root: string): Promise<string | undefined> {
  if (value === undefined || value === '') return undefined;
  if (/^https?:\/\//i.test(value)) return value.replace(/\/+$/, '');
  const paths = resolveHome({ home: root, node: value });
  const running = await listeningUrl(paths.dir);
  if (running) return running;
  try {
    const cfg = await loadConfig(paths.config, value);
    const host = ['0.0.0.0', '::', ''].includes(cfg.server.host) ? '127.0.0.1' : cfg.server.host;
    return `http://${host.includes(':') ? `[${host}]` : host}:${cfg.server.port}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** `url` with its port replaced. */
function withPort(url: string, port: number): string {
  const u = new URL(url);
  u.port = String(port);
  return u.href.replace(/\/+$/, '');
}

export async function openCli(opts: ConnectOpts): Promise<Cli> {
  const root = homeRoot(opts.home);
  const profiles = new Profiles(root);
  const profile = await profiles.read(opts.profile || process.env.HEARTH_PROFILE || 'default');
  const explicit = opts.url ?? (await resolveNodeUrl(opts.node, root)) ?? (opts.node ? opts.node : undefined);
  if (!opts.url && opts.node && !explicit?.startsWith('http')) {
    throw new UsageError(`--node ${opts.node}: not a URL and no local node home of that name under ${root}`);
  }
  const chosen =
    explicit ??
    (await resolveNodeUrl(process.env.HEARTH_NODE, root)) ??
    profile.node ??
    (await resolveNodeUrl(DEFAULT_NODE_NAME, root)) ??
    `http://127.0.0.1:${DEFAULT_SERVER_PORT}`;
  const nodeUrl = opts.port === undefined ? chosen : withPort(chosen, opts.port);
  const sameNode = profile.node === nodeUrl;
  const tokenStore = sameNode ? new ProfileTokenStore(profiles, profile) : new MemoryTokenStore();
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));
  const out = new Output(opts.output ?? 'table', process.stdout, { wide: opts.wide, raw: opts.raw });
  const remembered: Recent = {};
  return {
    remember: (kind, id) => void (remembered[kind] = id),
    // an empty value is stored and read back as nothing remembered (recent.ts keeps only ids)
    forget: (kind) => void (remembered[kind] = ''),
    recent: new RecentRefs(profiles.dir, profile.name),
    remembered,
    client: createClient({ baseUrl: nodeUrl, tokenStore, timeoutMs: opts.timeout ?? DEFAULT_TIMEOUT_MS, fetch: httpFetch }),
    out,
    nodeUrl,
    profile,
    profiles,
    signal: controller.signal,
    confirm: (question) => confirm(question, opts.yes),
    progress: (label) => new Progress(label, { json: out.json }),
  };
}

/**
 * Wraps a command action: opens the CLI context from the command's options, runs `fn` with the
 * positional arguments, and prints a failure (JSON on stderr with `--output json`).
 */
export function withCli<O extends ConnectOpts>(
  fn: (cli: Cli, args: string[], opts: O) => Promise<void>,
): (...params: unknown[]) => Promise<void> {
  return async (...params: unknown[]) => {
    const command = params.pop() as Command;
    const opts = command.optsWithGlobals() as O;
    const args = params.slice(0, -1) as unknown[];
    try {
      const cli = await openCli(opts);
      // prefixes, aliases and @last become ids before the action runs (refs.ts)
      const used = await resolveAll(refContext(cli), args, opts as unknown as Record<string, unknown>);
      await fn(cli, args as string[], opts);
      await cli.recent.set(cli.nodeUrl, { ...used, ...cli.remembered }).catch((err: NodeJS.ErrnoException) => {
        process.stderr.write(`hearth: note: could not remember the ids used for @last (${err.code ?? err.message})\n`);
      });
    } catch (err) {
      const local = err instanceof NetworkError ? await localNodeAt(err.url, homeRoot(opts.home)).catch(() => undefined) : undefined;
      throw report(err, opts, local);
    }
  };
}

/**
 * The local node home whose node answers at `url`'s origin, if any: its name is what starts that
 * node again (`hearth run --node <name>`). Read only when a node could not be reached.
 */
export async function localNodeAt(url: string, root: string): Promise<string | undefined> {
  const origin = new URL(url).origin;
  const entries = await readdir(root, { withFileTypes: true });
  for (const e of entries.filter((d) => d.isDirectory()).slice(0, 64)) {
    const at = await resolveNodeUrl(e.name, root).catch(() => undefined);
    if (at && new URL(at).origin === origin) return e.name;
  }
  return undefined;
}

/** Prints a failure in the command's output format; returns the {@link Reported} to throw. */
export function report(err: unknown, opts: ConnectOpts, localNode?: string): Reported | unknown {
  if (err instanceof InvalidArgumentError) return err;
  const failure = describeFailure(err, opts.profile, localNode);
  printFailure(failure, opts, err);
  return new Reported(failure.code);
}

/**
 * One failure, one line (issue #16): `hearth: <what happened>; <what to do>` — or one JSON object
 * with `--output json`. The stack trace follows only with `--verbose`.
 */
export function printFailure(failure: { code: number; message: string; hint?: string; status?: number }, opts: GlobalOpts, err?: unknown): void {
  if (opts.output === 'json') {
    process.stderr.write(`${JSON.stringify({ error: failure.message, exitCode: failure.code, status: failure.status, hint: failure.hint })}\n`);
  } else {
    process.stderr.write(`hearth: ${failure.message}${failure.hint ? `; ${failure.hint}` : ''}\n`);
  }
  if (opts.verbose && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
}
