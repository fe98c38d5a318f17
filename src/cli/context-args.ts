/**
 * Arguments the `context`, `call` and `events` commands share (issue #6; product.md §10 "parse-time
 * validation of ids"): ids checked when the command line is parsed (64 hex or base58 of 32 bytes,
 * as the node accepts them), references that may also be an alias the node resolves
 * (`POST /admin-api/alias/lookup/{scope}/{name}`, as the reference CLI accepts context and
 * application aliases), and JSON values given inline, as `@file` or as `-` (stdin). The id and
 * alias parsers are the shared ones of id-args.ts; this file adds what these groups need on top.
 */
import { stringifyJson, type AliasScope } from '../client/index.ts';
import { positiveInt, type Cli } from './connect.ts';
import { UsageError } from './exit.ts';
import { idArg, idOrAliasArg, resolveRef as lookupRef, type IdRef } from './id-args.ts';
import { readJson } from './json-args.ts';
import { refArg } from './refs.ts';

/** An id, or a name to look up in one of the node's alias scopes. */
export type Ref = IdRef;

/** commander parser for a plain id: lowercase hex out, or the option/argument is refused (exit 2). */
export const parseIdArg = idArg;

/** commander parser for an id or an alias name (the node's alias rule: 1-50 of `A-Z a-z 0-9 . _ -`). */
export const parseRefArg = idOrAliasArg;

/** commander parsers for a context / application: id, unique prefix, alias or @last (refs.ts). */
export const contextRefArg = (label = '<context>') => refArg('context', undefined, label);
export const applicationRefArg = (label = '--application') => refArg('application', undefined, label);

/** commander collector for a repeatable context option. */
export function collectRef(value: string, previous: string[] = []): string[] {
  return [...previous, contextRefArg('--context')(value)];
}

/** commander collector for a repeatable group option. */
export function collectId(value: string, previous: string[] = []): string[] {
  return [...previous, refArg('group', 'group id')(value)];
}

/** commander parser for `--count <n>`. */
export const parseCount = positiveInt('events');

/**
 * The id a reference names. An alias the node does not know is the caller's mistake (exit 2),
 * named with the flag or argument it came from.
 */
export async function resolveRef(cli: Cli, ref: Ref | string, scope: AliasScope, what: string): Promise<string> {
  if (typeof ref === 'string') return ref; // already resolved by withCli (refs.ts)
  try {
    return await lookupRef(cli, scope, ref);
  } catch (err) {
    throw err instanceof UsageError ? new UsageError(`${what}: ${err.message}`) : err;
  }
}

/** A JSON value from `--args`-style flags (see json-args.ts), or `fallback` when the flag is absent. */
export async function readJsonArg(value: string | undefined, flag: string, fallback: unknown): Promise<unknown> {
  return value === undefined ? fallback : readJson(value, flag);
}

/** A method's output for people: strings as they are, nothing as a note, anything else as JSON. */
export function humanValue(value: unknown, method: string): string {
  if (value === null || value === undefined) return `${method}: no return value`;
  if (typeof value === 'string') return value;
  return stringifyJson(value);
}
