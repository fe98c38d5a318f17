/**
 * Parse-time checks of the ids operator commands take (issue #6; product.md §10 "parse-time
 * validation of ids"): a bad id fails before any request, as a usage error (exit 2) naming the
 * argument. Ids are 64 hex characters (any case) or base58 of 32 bytes (reference README "Id
 * encodings"); they are always sent as 64 lowercase hex.
 *
 * Where the reference CLI takes an id *or* an alias (applications, contexts), the argument parses
 * to an {@link IdRef}; {@link resolveRef} turns an alias into its id with the node's
 * `alias/lookup`, and an unknown alias into a usage error naming the command that lists aliases.
 */
import { InvalidArgumentError } from 'commander';
import type { AliasScope } from '../client/index.ts';
import { parseId } from '../crypto/ids.ts';
import type { Cli } from './connect.ts';
import { UsageError } from './exit.ts';
import { refArg, type RefKind } from './refs.ts';

const ALIAS = /^[A-Za-z0-9._-]{1,50}$/;

/** An id as typed: a 32-byte id (normalised to hex) or an alias to look up. */
export type IdRef = { id: string } | { alias: string };

/** The kind of id an argument described as `what` ("namespace id", "account id", …) takes. */
function kindOf(what: string | undefined): RefKind | undefined {
  if (!what) return undefined;
  const w = what.toLowerCase();
  if (w.startsWith('context')) return 'context';
  if (w.startsWith('application')) return 'application';
  if (w.startsWith('namespace')) return 'namespace';
  if (w.startsWith('group') || w.startsWith('new parent') || w.startsWith('parent')) return 'group';
  if (w.startsWith('account') || w.startsWith('identity') || w.startsWith('member')) return 'identity';
  if (w.startsWith('blob') || w === 'app key') return 'blob';
  return undefined;
}

/**
 * A commander parser for an id described as `what`: for the kinds refs.ts knows (contexts,
 * applications, namespaces, groups, accounts, blobs) a full id, a unique prefix, an alias or
 * `@last` (resolved by withCli); otherwise a 32-byte id → 64 lowercase hex. `what` names it in the
 * refusal.
 */
export function idArgFor(what?: string): (value: string) => string {
  const kind = kindOf(what);
  if (kind) return refArg(kind, what);
  const prefix = what ? `not ${/^[aeiou]/i.test(what) ? 'an' : 'a'} ${what}: ` : '';
  return (value) => {
    const id = parseId(value);
    if (!id) throw new InvalidArgumentError(`${prefix}expected 64 hex characters (or base58 of 32 bytes)`);
    return id;
  };
}

/** commander parser: a 32-byte id → 64 lowercase hex. */
export const idArg = idArgFor();

/** commander parser: an id, or an alias (1–50 of A-Z a-z 0-9 . _ -). An id wins when both fit. */
export function idOrAliasArg(value: string): IdRef {
  const id = parseId(value);
  if (id) return { id };
  if (ALIAS.test(value)) return { alias: value };
  throw new InvalidArgumentError('expected 64 hex characters, base58 of 32 bytes, or an alias (letters, digits, ".", "_", "-"; at most 50)');
}

/** The id a reference names; an alias the node does not know is a usage error with the next command. */
export async function resolveRef(cli: Cli, scope: AliasScope, ref: IdRef | string): Promise<string> {
  if (typeof ref === 'string') return ref; // already resolved by withCli (refs.ts)
  if ('id' in ref) return ref.id;
  const id = await cli.client.aliases.lookup(scope, ref.alias, { signal: cli.signal });
  if (id === null) throw new UsageError(`no ${scope} alias "${ref.alias}" on this node (see: hearth alias list ${scope})`);
  return id;
}

/** commander collector for repeatable options. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
