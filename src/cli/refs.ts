/**
 * Ids a person can type (issue #25 §3). Wherever a command takes a context, application,
 * namespace, group, identity or blob id it also takes:
 *
 * - a unique prefix of at least 6 hex characters (tables shorten ids to about 10), resolved
 *   against what the node lists; an ambiguous prefix is a usage error listing the candidates;
 * - an alias, for the kinds that have an alias scope on the node (contexts, applications);
 * - `@last`: the context, namespace or application last created or used with this profile on
 *   this node (src/cli/recent.ts; `hearth use <kind> <ref>` sets it).
 *
 * Parsing happens when commander reads the command line: a full id (64 hex, or base58 of 32 bytes)
 * becomes 64 lowercase hex at once; anything else that could name an id becomes a
 * {@link DeferredRef}, which `withCli` (connect.ts) resolves against the node before the command's
 * action runs, so an action only ever sees full ids.
 */
import { InvalidArgumentError } from 'commander';
import { parseId } from '../crypto/ids.ts';
import type { Client } from '../client/index.ts';
import { UsageError } from './exit.ts';
import { REMEMBERED_KINDS, type Recent, type RememberedKind } from './recent.ts';

export type RefKind = 'context' | 'application' | 'namespace' | 'group' | 'identity' | 'blob' | 'rootKey' | 'clientKey' | 'key';

export const MIN_PREFIX = 6;
const ALIAS = /^[A-Za-z0-9._-]{1,50}$/;
const HEX = /^[0-9a-fA-F]+$/;
const ALIASED = new Set<RefKind>(['context', 'application']);
export const LAST = '@last';

/** What a kind is called, and the command that lists its ids. */
const NAMES: Record<RefKind, { what: string; list: string }> = {
  context: { what: 'context', list: 'hearth context list' },
  application: { what: 'application', list: 'hearth app list' },
  namespace: { what: 'namespace', list: 'hearth namespace list' },
  group: { what: 'group', list: 'hearth namespace groups <namespace>' },
  identity: { what: 'identity', list: 'hearth group members list <group>' },
  blob: { what: 'blob', list: 'hearth blob list' },
  rootKey: { what: 'root key', list: 'hearth key list' },
  clientKey: { what: 'client key', list: 'hearth key clients' },
  key: { what: 'root or client key', list: 'hearth key list, hearth key clients' },
};

/** A client key id is a UUID: its prefix may hold dashes. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID_PREFIX = /^[0-9a-fA-F-]+$/;

/** Whether `text` may be a prefix of an id of `kind` (hex; a UUID's characters for client keys). */
function prefixOf(kind: RefKind, text: string): boolean {
  if (text.length < MIN_PREFIX) return false;
  return kind === 'clientKey' || kind === 'key' ? UUID_PREFIX.test(text) && text.length < 36 : HEX.test(text) && text.length < 64;
}

/** A reference to resolve against the node: a prefix, an alias or `@last`. */
export class DeferredRef {
  constructor(
    readonly kind: RefKind,
    readonly text: string,
    /** how the command line names the argument, for messages (`<context>`, `--application`) */
    readonly label?: string,
  ) {}
}

const isRemembered = (kind: RefKind): kind is RememberedKind => (REMEMBERED_KINDS as readonly string[]).includes(kind);

/**
 * A commander parser for an id of `kind`: full ids become 64 lowercase hex, prefixes, aliases and
 * `@last` a {@link DeferredRef} (typed as the string it becomes once `withCli` resolved it).
 * `what` names the argument in the refusal (`not a namespace id: …`).
 */
export function refArg(kind: RefKind, what?: string, label?: string): (value: string) => string {
  const prefix = what ? `not ${/^[aeiou]/i.test(what) ? 'an' : 'a'} ${what}: ` : '';
  return (value) => {
    const deferred = (text: string) => new DeferredRef(kind, text, label) as unknown as string;
    if (kind === 'clientKey' || kind === 'key') {
      if (UUID.test(value)) return value.toLowerCase();
      const root = kind === 'key' ? parseId(value) : undefined;
      if (root) return root;
      if (prefixOf(kind, value)) return deferred(value.toLowerCase());
      const what = kind === 'key' ? 'a root key id (64 hex) or a client key id (a UUID)' : 'a client key id (a UUID)';
      throw new InvalidArgumentError(`${prefix}expected ${what}, or a unique prefix of at least ${MIN_PREFIX} characters of one (see: ${NAMES[kind].list})`);
    }
    // a full id first: base58 of 32 bytes (32-44 characters) wins over a hex prefix of that length,
    // which nobody types (tables show about 10 characters)
    const id = parseId(value);
    // a full id of a remembered kind still passes through withCli, which remembers it for @last
    if (id) return isRemembered(kind) ? deferred(id) : id;
    if (value === LAST && isRemembered(kind)) return deferred(value);
    if (prefixOf(kind, value)) return deferred(value.toLowerCase());
    if (ALIASED.has(kind) && ALIAS.test(value)) return deferred(value);
    const forms = [
      '64 hex characters (or base58 of 32 bytes)',
      `a unique prefix of at least ${MIN_PREFIX} hex characters`,
      ...(ALIASED.has(kind) ? [`an alias`] : []),
      ...(isRemembered(kind) ? ['@last'] : []),
    ];
    throw new InvalidArgumentError(`${prefix}expected ${forms.slice(0, -1).join(', ')} or ${forms.at(-1)}`);
  };
}

/** A candidate id with a name people know it by (alias, name, package), for ambiguity messages. */
export interface Candidate {
  id: string;
  name?: string;
}

/** The ids of a kind the node knows, for prefix matching. */
export async function candidates(client: Client, kind: RefKind, signal?: AbortSignal): Promise<Candidate[]> {
  const opts = { signal };
  switch (kind) {
    case 'context':
      return (await client.contexts.list(opts)).map((c) => ({ id: c.id }));
    case 'application':
      return (await client.applications.list(opts)).map((a) => ({ id: a.id, name: a.package ? `${a.package}${a.version ? `@${a.version}` : ''}` : undefined }));
    case 'namespace':
      return (await client.namespaces.list(opts)).map((n) => ({ id: n.namespaceId, name: n.name ?? undefined }));
    case 'group': {
      const spaces = await client.namespaces.list(opts);
      const groups = await Promise.all(spaces.map((n) => client.namespaces.groups(n.namespaceId, opts)));
      return [...spaces.map((n) => ({ id: n.namespaceId, name: n.name ?? undefined })), ...groups.flat().map((g) => ({ id: g.groupId, name: g.name }))];
    }
    case 'identity': {
      const [me, spaces] = await Promise.all([client.accounts.identity(opts), client.namespaces.list(opts)]);
      const members = await Promise.all(spaces.map((n) => client.groups.members(n.namespaceId, opts)));
      return [{ id: me.accountId, name: 'this node' }, ...members.flat().map((m) => ({ id: m.identity, name: m.name }))];
    }
    case 'blob':
      return (await client.blobs.list(opts)).map((b) => ({ id: b.blob_id }));
    case 'rootKey':
      return (await client.auth.listRootKeys(opts)).map((k) => ({ id: k.key_id, name: k.public_key }));
    case 'clientKey':
      return (await client.auth.listClientKeysWithDetails(opts)).map((k) => ({ id: k.client_id, name: k.name }));
    case 'key':
      return [...(await candidates(client, 'rootKey', signal)), ...(await candidates(client, 'clientKey', signal))];
  }
}

/** The one candidate `prefix` names, or a usage error: none, or several (listed). */
export function matchPrefix(kind: RefKind, prefix: string, all: Candidate[]): string | undefined {
  const seen = new Map<string, Candidate>();
  for (const c of all) if (c.id.startsWith(prefix) && !seen.has(c.id)) seen.set(c.id, c);
  const found = [...seen.values()];
  if (found.length === 1) return found[0]!.id;
  if (found.length === 0) return undefined;
  const shown = found.slice(0, 5).map((c) => `${c.id.slice(0, 16)}…${c.name ? ` (${c.name})` : ''}`);
  const more = found.length > 5 ? ` and ${found.length - 5} more` : '';
  throw new UsageError(`${NAMES[kind].what} prefix ${prefix} is ambiguous: ${shown.join(', ')}${more}; type more characters`);
}

export interface RefContext {
  client: Client;
  signal?: AbortSignal;
  nodeUrl: string;
  profile: string;
  recent(): Promise<Recent>;
}

/** Resolves one deferred reference to its id. */
export async function resolveDeferred(ctx: RefContext, ref: DeferredRef, cache = new Map<RefKind, Promise<Candidate[]>>()): Promise<string> {
  const { what, list } = NAMES[ref.kind];
  const at = ref.label ? `${ref.label}: ` : '';
  if (/^[0-9a-f]{64}$/.test(ref.text)) return ref.text;
  if (ref.text === LAST) {
    const id = (await ctx.recent())[ref.kind as RememberedKind];
    if (!id) throw new UsageError(`${at}no ${what} to call @last yet for profile "${ctx.profile}" on ${ctx.nodeUrl}: create one, or name one with: hearth use ${ref.kind} <id|prefix${ALIASED.has(ref.kind) ? '|alias' : ''}>`);
    return id;
  }
  if (prefixOf(ref.kind, ref.text)) {
    let pending = cache.get(ref.kind);
    if (!pending) cache.set(ref.kind, (pending = candidates(ctx.client, ref.kind, ctx.signal)));
    const id = matchPrefix(ref.kind, ref.text, await pending);
    if (id) return id;
    if (!ALIASED.has(ref.kind)) throw new UsageError(`${at}no ${what} id on this node starts with ${ref.text} (see: ${list})`);
  }
  const scope = ref.kind as 'context' | 'application';
  const id = await ctx.client.aliases.lookup(scope, ref.text, { signal: ctx.signal });
  if (id === null) {
    const hex = HEX.test(ref.text) && ref.text.length >= MIN_PREFIX;
    throw new UsageError(`${at}no ${scope} ${hex ? `id starts with ${ref.text} and no ${scope} alias of that name` : `alias "${ref.text}"`} on this node (see: ${hex ? list : `hearth alias list ${scope}`})`);
  }
  return id;
}

/** Parses and resolves `text` as an id of `kind` at once (for arguments whose kind depends on another one). */
export async function resolveText(ctx: RefContext, kind: RefKind, text: string, label: string): Promise<string> {
  let parsed: unknown;
  try {
    parsed = refArg(kind, undefined, label)(text);
  } catch (err) {
    throw new UsageError(`${label}: ${(err as Error).message}`);
  }
  return parsed instanceof DeferredRef ? resolveDeferred(ctx, parsed) : (parsed as string);
}

/** The context refs.ts resolves in, from an open CLI. */
export function refContext(cli: { client: Client; signal?: AbortSignal; nodeUrl: string; profile: { name: string }; recent: { get(node: string): Promise<Recent> } }): RefContext {
  return { client: cli.client, signal: cli.signal, nodeUrl: cli.nodeUrl, profile: cli.profile.name, recent: () => cli.recent.get(cli.nodeUrl) };
}

/**
 * Replaces every {@link DeferredRef} in a command's positional arguments and options (arrays
 * included) by its id. Returns what was used of the remembered kinds, for `@last`.
 */
export async function resolveAll(ctx: RefContext, args: unknown[], opts: Record<string, unknown>): Promise<Recent> {
  const used: Recent = {};
  const cache = new Map<RefKind, Promise<Candidate[]>>();
  const one = async (v: unknown): Promise<unknown> => {
    if (Array.isArray(v)) return Promise.all(v.map(one));
    if (!(v instanceof DeferredRef)) return v;
    const id = await resolveDeferred(ctx, v, cache);
    if (isRemembered(v.kind)) used[v.kind] = id;
    return id;
  };
  for (let i = 0; i < args.length; i++) args[i] = await one(args[i]);
  for (const key of Object.keys(opts)) opts[key] = await one(opts[key]);
  return used;
}
