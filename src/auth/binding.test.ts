import { describe, expect, it } from 'vitest';
import { bindingOf, canonicalId, idsEqual, isBound, mayActOn, type Binding } from './binding.ts';

const C1 = '1'.repeat(64);
const C2 = '2'.repeat(64);
const G1 = 'a'.repeat(64);
const G2 = 'b'.repeat(64);
const APP = 'c'.repeat(64);
const OTHER_APP = 'd'.repeat(64);
const PK = 'e'.repeat(64);

const UNBOUND: Binding = { contexts: [], groups: [], applications: [] };

describe('bindingOf', () => {
  it('reads contexts from the context[<id>,<identity>] entry the mint adds', () => {
    expect(bindingOf([`context[${C1},${PK}]`, 'context:execute'])).toEqual({ contexts: [C1], groups: [], applications: [] });
  });

  it('reads groups from group[<id>] entries', () => {
    expect(bindingOf([`group[${G1}]`, `group[${G2}]`]).groups).toEqual([G1, G2]);
  });

  it('takes the application from application_id', () => {
    expect(bindingOf([], APP).applications).toEqual([APP]);
    expect(bindingOf([], null).applications).toEqual([]);
    expect(bindingOf([], '').applications).toEqual([]);
  });

  it('is not narrowed by scoped verbs, global umbrellas or unparseable strings', () => {
    const b = bindingOf([`context:list[${C1}]`, `context:execute[${C1}]`, `group:list[${G1}]`, 'context', 'group', 'context[]', 'context[,pk]', 'admin', 'keys:*', `namespace[${G1}]`]);
    expect(b).toEqual(UNBOUND);
    expect(isBound(b)).toBe(false);
  });

  it('lists an id once, whatever its letter case', () => {
    expect(bindingOf([`context[${G1}]`, `context[${G1.toUpperCase()},${PK}]`]).contexts).toEqual([G1]);
  });
});

describe('isBound', () => {
  it('is true when any list is non-empty', () => {
    expect(isBound(UNBOUND)).toBe(false);
    expect(isBound({ ...UNBOUND, contexts: [C1] })).toBe(true);
    expect(isBound({ ...UNBOUND, groups: [G1] })).toBe(true);
    expect(isBound({ ...UNBOUND, applications: [APP] })).toBe(true);
  });
});

describe('mayActOn', () => {
  const contextKey = bindingOf([`context[${C1},${PK}]`]);
  const groupKey = bindingOf([`group[${G1}]`]);
  const appKey = bindingOf([], APP);

  it('lets an unbound key act anywhere, with or without a target', () => {
    expect(mayActOn(UNBOUND, { kind: 'context', id: C2 })).toBe(true);
    expect(mayActOn(UNBOUND, { kind: 'blob', id: 'x' })).toBe(true);
    expect(mayActOn(UNBOUND, undefined)).toBe(true);
  });

  it('lets a context-bound key act on its context only', () => {
    expect(mayActOn(contextKey, { kind: 'context', id: C1 })).toBe(true);
    expect(mayActOn(contextKey, { kind: 'context', id: C2 })).toBe(false);
    expect(mayActOn(contextKey, { kind: 'group', id: G1 })).toBe(false);
    expect(mayActOn(contextKey, { kind: 'application', id: APP })).toBe(false);
  });

  it('lets a group-bound key act on its group, and on the namespace with that id', () => {
    expect(mayActOn(groupKey, { kind: 'group', id: G1 })).toBe(true);
    expect(mayActOn(groupKey, { kind: 'namespace', id: G1 })).toBe(true);
    expect(mayActOn(groupKey, { kind: 'group', id: G2 })).toBe(false);
    expect(mayActOn(groupKey, { kind: 'context', id: C1 })).toBe(false);
  });

  it("lets an application-bound key act on its application and that application's contexts", () => {
    expect(mayActOn(appKey, { kind: 'application', id: APP })).toBe(true);
    expect(mayActOn(appKey, { kind: 'application', id: OTHER_APP })).toBe(false);
    expect(mayActOn(appKey, { kind: 'context', id: C1 }, { contextApplication: APP })).toBe(true);
    expect(mayActOn(appKey, { kind: 'context', id: C1 }, { contextApplication: OTHER_APP })).toBe(false);
    expect(mayActOn(appKey, { kind: 'context', id: C1 })).toBe(false);
    expect(mayActOn(appKey, { kind: 'context', id: C1 }, { contextApplication: null })).toBe(false);
  });

  it('does not let a context-bound key reach other contexts through contextApplication', () => {
    expect(mayActOn(contextKey, { kind: 'context', id: C2 }, { contextApplication: APP })).toBe(false);
  });

  it('refuses a bound key on blobs and on unknown target kinds', () => {
    expect(mayActOn(contextKey, { kind: 'blob', id: C1 })).toBe(false);
    expect(mayActOn(contextKey, { kind: 'package', id: C1 })).toBe(false);
  });

  it('refuses a bound key on a route naming no target, unless the handler checks', () => {
    expect(mayActOn(contextKey, undefined)).toBe(false);
    expect(mayActOn(contextKey, undefined, { handlerChecks: true })).toBe(true);
    expect(mayActOn(appKey, undefined, { handlerChecks: false })).toBe(false);
  });

  it('accepts a target id in another letter case', () => {
    expect(mayActOn(groupKey, { kind: 'group', id: G1.toUpperCase() })).toBe(true);
  });

  it('combines bindings: a key bound to a context and a group may act on both', () => {
    const both = bindingOf([`context[${C1},${PK}]`, `group[${G1}]`]);
    expect(mayActOn(both, { kind: 'context', id: C1 })).toBe(true);
    expect(mayActOn(both, { kind: 'group', id: G1 })).toBe(true);
    expect(mayActOn(both, { kind: 'context', id: C2 })).toBe(false);
  });
});

describe('ids', () => {
  const HEX = '00' + 'ab'.repeat(30) + 'ff';
  const B58 = '13cpvoZKJ28f1CDBboEmfEXMVVMcSQzBhTEMtecGWQ8N';

  it('compares 64-hex ids case-insensitively', () => {
    expect(idsEqual(HEX, HEX.toUpperCase())).toBe(true);
    expect(idsEqual(G1, G2)).toBe(false);
  });

  it('reads base58 of 32 bytes as the same id as its hex', () => {
    expect(canonicalId(B58)).toBe(HEX);
    expect(idsEqual(B58, HEX)).toBe(true);
    expect(canonicalId('1'.repeat(32))).toBe('00'.repeat(32));
    expect(canonicalId('JEKNVnkbo3jma5nREBBJCDoXFVeKkD56V3xKrvRmWxFG')).toBe('ff'.repeat(32));
  });

  it('keeps base58 case-sensitive', () => {
    expect(idsEqual(B58, B58.toLowerCase())).toBe(false);
  });

  it('compares other strings exactly', () => {
    expect(canonicalId('ctx-1')).toBe('ctx-1');
    expect(idsEqual('ctx-1', 'ctx-1')).toBe(true);
    expect(idsEqual('ctx-1', 'CTX-1')).toBe(false);
    // base58 alphabet but not 32 bytes
    expect(canonicalId('tVojvhToWjQ8Xvo4UPx2Xz9eRy7auyYMmZBjc2XfN')).toBe('tVojvhToWjQ8Xvo4UPx2Xz9eRy7auyYMmZBjc2XfN');
  });
});

describe('group bindings reach open subgroups (issue #17 finding 10)', () => {
  // N ─ S (open)
  //   └ R (restricted) ─ T (open)
  const N = '5'.repeat(64);
  const S = '6'.repeat(64);
  const R = '7'.repeat(64);
  const T = '8'.repeat(64);
  const paths: Record<string, { id: string; open: boolean }[]> = {
    [N]: [{ id: N, open: true }],
    [S]: [{ id: S, open: true }, { id: N, open: true }],
    [R]: [{ id: R, open: false }, { id: N, open: true }],
    [T]: [{ id: T, open: true }, { id: R, open: false }, { id: N, open: true }],
  };
  const groupPath = (id: string) => paths[id];
  const may = (bound: string, target: string, kind = 'group') => mayActOn(bindingOf([`group[${bound}]`]), { kind, id: target }, { groupPath });

  it('a key bound to a namespace acts on its open subgroups, as its members are inherited there', () => {
    expect(may(N, N, 'namespace')).toBe(true);
    expect(may(N, S)).toBe(true);
    expect(may(N, S.toUpperCase())).toBe(true);
  });

  it('but not on a restricted subgroup, nor below one', () => {
    expect(may(N, R)).toBe(false);
    expect(may(N, T)).toBe(false);
    expect(may(R, T)).toBe(true);
  });

  it('never reaches up: a key bound to a subgroup may not act on its parent or namespace', () => {
    expect(may(S, N)).toBe(false);
    expect(may(S, N, 'namespace')).toBe(false);
    expect(may(T, R)).toBe(false);
  });

  it('without the hierarchy (an unknown group) only the bound ids count', () => {
    expect(mayActOn(bindingOf([`group[${N}]`]), { kind: 'group', id: S })).toBe(false);
    expect(may(N, 'f'.repeat(64))).toBe(false);
  });
});
