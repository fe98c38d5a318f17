import { expect, it } from 'vitest';
import { bindingOf } from '../auth/binding.ts';
import type { Principal } from '../auth/service.ts';
import { HearthError, notFound } from '../errors.ts';
import { contextApplicationVia, observable, parseIdSets } from './access.ts';

const C1 = '11'.repeat(32);
const C2 = '22'.repeat(32);
const G1 = '33'.repeat(32);
const G2 = '44'.repeat(32);
const APP = '55'.repeat(32);

const principal = (permissions: string[], applicationId?: string): Principal => ({
  keyId: 'k',
  keyType: 'client',
  rootKeyId: 'r',
  permissions,
  binding: bindingOf(permissions, applicationId ?? null),
});
const known = { groupKnown: (id: string) => id === G1 || id === G2 };

async function status(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return e instanceof HearthError ? e.kind : 'other';
  }
}

it('an admin token observes every held id; unknown groups are dropped', async () => {
  const unknownGroup = '66'.repeat(32);
  const kept = await observable(principal(['admin']), { contexts: [C1, C2], groups: [G1, unknownGroup] }, known);
  expect(kept).toEqual({ contexts: [C1, C2], groups: [G1] });
});

it('an unbound token silently loses the ids its permissions do not cover', async () => {
  const p = principal([`context:list[${C1}]`, `group:list[${G2}]`]);
  expect(await observable(p, { contexts: [C1, C2], groups: [G1, G2] }, known)).toEqual({ contexts: [C1], groups: [G2] });
});

it('a context-bound client key is refused (403) for any other context or group', async () => {
  const p = principal([`context[${C1},${'77'.repeat(32)}]`]);
  expect(await observable(p, { contexts: [C1], groups: [] }, known)).toEqual({ contexts: [C1], groups: [] });
  expect(await status(observable(p, { contexts: [C1, C2], groups: [] }, known))).toBe('forbidden');
  expect(await status(observable(p, { contexts: [], groups: [G1] }, known))).toBe('forbidden');
});

it('an application-bound key observes only contexts of its application', async () => {
  const deps = { ...known, contextApplication: async (id: string) => (id === C1 ? APP : id === C2 ? '88'.repeat(32) : null) };
  const p = principal(['context:list'], APP);
  expect(await observable(p, { contexts: [C1], groups: [] }, deps)).toEqual({ contexts: [C1], groups: [] });
  expect(await status(observable(p, { contexts: [C2], groups: [] }, deps))).toBe('forbidden');
});

it('keeps contexts the node does not hold yet for unbound tokens, but not for an application-bound key', async () => {
  const deps = { ...known, contextApplication: async (id: string) => (id === C1 ? APP : null) };
  expect(await observable(principal(['admin']), { contexts: [C1, C2], groups: [] }, deps)).toEqual({ contexts: [C1, C2], groups: [] });
  expect(await status(observable(principal(['context:list'], APP), { contexts: [C2], groups: [] }, deps))).toBe('forbidden');
});

it('maps a not_found lookup to "not held" and lets other failures through', async () => {
  const lookup = contextApplicationVia(async (id) => {
    if (id === C1) return { applicationId: APP };
    if (id === C2) throw notFound('Context not found');
    throw new Error('store down');
  });
  expect(await lookup(C1)).toBe(APP);
  expect(await lookup(C2)).toBeNull();
  await expect(lookup('99'.repeat(32))).rejects.toThrow('store down');
});

it('parses ids as 64 lowercase hex, accepts base58, de-duplicates, and names a bad one', () => {
  const zeros58 = '11111111111111111111111111111111';
  expect(parseIdSets({ contextIds: [C1.toUpperCase(), C1, zeros58] })).toEqual({ contexts: [C1, '00'.repeat(32)], groups: [] });
  expect(parseIdSets(undefined)).toEqual({ contexts: [], groups: [] });
  expect(() => parseIdSets({ groupIds: ['nope'] })).toThrow(/params\.groupIds\[0\]/);
  expect(() => parseIdSets({ contextIds: 'x' })).toThrow(/must be an array/);
  expect(() => parseIdSets([])).toThrow(/params must be an object/);
});

it('refuses subscription ids that are only ids once cleaned (issue #17 finding 3)', () => {
  for (const raw of [` ${'a'.repeat(64)}`, `${'a'.repeat(64)}\u200b`, '\u0000', '']) {
    expect(() => parseIdSets({ contextIds: [raw] })).toThrow(HearthError);
  }
  expect(parseIdSets({ contextIds: ['A'.repeat(64)] }).contexts).toEqual(['a'.repeat(64)]);
});
