/**
 * The shared part of every operator command (issue #6 CLI): the connection options, which node
 * and profile a command talks to, the SDK client with the profile's tokens, output, confirmation,
 * progress, and the one place a failure becomes a message and an exit code.
 *
 * Which node: `--node` (a URL, or the name of a local node home whose config.toml gives the
 * port), then `$HEARTH_NODE`, then the profile's node, then the local `default` node, then
 * `http://127.0.0.1:2528`. A profile's tokens are used only with the node they were issued by.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { createClient, MemoryTokenStore, type Client } from '../client/index.ts';
import { loadConfig } from '../config/config.ts';
import { DEFAULT_NODE_NAME, DEFAULT_SERVER_PORT } from '../config/defaults.ts';
import { resolveHome } from '../config/home.ts';
import { describeFailure, UsageError } from './exit.ts';
import { Output, type OutputFormat } from './output.ts';
import { Profiles, ProfileTokenStore, type Profile } from './profiles.ts';
import { confirm } from './prompt.ts';
import { Progress } from './progress.ts';

export interface ConnectOpts {
  node?: string;
  profile?: string;
  home?: string;
  output?: OutputFormat;
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
}

/** Thrown after a failure was printed: carries only the exit code. */
export class Reported extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

export const DEFAULT_TIMEOUT_MS = 30_000;

export function parseFormat(value: string): OutputFormat {
  if (value !== 'human' && value !== 'json') throw new InvalidArgumentError('must be "human" or "json"');
  return value;
}

/** A commander parser for a positive whole number (`unit` names it in the refusal). */
export function positiveInt(unit: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError(`must be a positive whole number of ${unit}`);
    return n;
  };
}

export const parseMs = positiveInt('milliseconds');

/** The options of a command that works on a local node home (`init`, `run`, `config …`). */
export function localNodeOptions(cmd: Command): Command {
  return cmd
    .option('--home <dir>', 'root of node homes (default ~/.hearth, or $HEARTH_HOME)')
    .option('--node <name>', 'node name: its home is <root>/<name>', DEFAULT_NODE_NAME)
    .option('--output <format>', 'human or json', parseFormat, 'human');
}

/** Adds the connection options to an operator command. */
export function connectOptions(cmd: Command, opts: { destructive?: boolean } = {}): Command {
  cmd
    .option('--node <url|name>', 'node URL, or the name of a local node home (default: the profile\'s node)')
    .option('--profile <name>', 'connection profile (default $HEARTH_PROFILE or "default")')
    .option('--home <dir>', 'root of node homes and profiles (default ~/.hearth, or $HEARTH_HOME)')
    .option('--output <format>', 'human or json', parseFormat, 'human')
    .option('--timeout <ms>', 'deadline of each request to the node', parseMs, DEFAULT_TIMEOUT_MS);
  if (opts.destructive) cmd.option('-y, --yes', 'do not ask for confirmation');
  return cmd;
}

export function homeRoot(home?: string): string {
  return home ?? process.env.HEARTH_HOME ?? join(homedir(), '.hearth');
}

/** A URL as given, or the local node home of that name (its configured host and port). */
export async function resolveNodeUrl(value: string | undefined, root: string): Promise<string | undefined> {
  if (value === undefined || value === '') return undefined;
  if (/^https?:\/\//i.test(value)) return value.replace(/\/+$/, '');
  const paths = resolveHome({ home: root, node: value });
  try {
    const cfg = await loadConfig(paths.config, value);
    const host = ['0.0.0.0', '::', ''].includes(cfg.server.host) ? '127.0.0.1' : cfg.server.host;
    return `http://${host.includes(':') ? `[${host}]` : host}:${cfg.server.port}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export async function openCli(opts: ConnectOpts): Promise<Cli> {
  const root = homeRoot(opts.home);
  const profiles = new Profiles(root);
  const profile = await profiles.read(opts.profile || process.env.HEARTH_PROFILE || 'default');
  const explicit = (await resolveNodeUrl(opts.node, root)) ?? (opts.node ? opts.node : undefined);
  if (opts.node && !explicit?.startsWith('http')) {
    throw new UsageError(`--node ${opts.node}: not a URL and no local node home of that name under ${root}`);
  }
  const nodeUrl =
    explicit ??
    (await resolveNodeUrl(process.env.HEARTH_NODE, root)) ??
    profile.node ??
    (await resolveNodeUrl(DEFAULT_NODE_NAME, root)) ??
    `http://127.0.0.1:${DEFAULT_SERVER_PORT}`;
  const sameNode = profile.node === nodeUrl;
  const tokenStore = sameNode ? new ProfileTokenStore(profiles, profile) : new MemoryTokenStore();
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));
  const out = new Output(opts.output ?? 'human');
  return {
    client: createClient({ baseUrl: nodeUrl, tokenStore, timeoutMs: opts.timeout ?? DEFAULT_TIMEOUT_MS }),
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
    const opts = command.opts() as O;
    const args = params.slice(0, -1) as string[];
    try {
      await fn(await openCli(opts), args, opts);
    } catch (err) {
      throw report(err, opts);
    }
  };
}

/** Prints a failure in the command's output format; returns the {@link Reported} to throw. */
export function report(err: unknown, opts: ConnectOpts): Reported | unknown {
  if (err instanceof InvalidArgumentError) return err;
  const failure = describeFailure(err, opts.profile);
  if (opts.output === 'json') {
    process.stderr.write(`${JSON.stringify({ error: failure.message, exitCode: failure.code, status: failure.status, hint: failure.hint })}\n`);
  } else {
    process.stderr.write(`hearth: ${failure.message}\n${failure.hint ? `  next: ${failure.hint}\n` : ''}`);
  }
  return new Reported(failure.code);
}
