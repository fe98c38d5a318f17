/**
 * Conformance: the alias routes (admin spec "Aliases") through the SDK, every scope, with the
 * answers and the documented refusals checked against the node's OpenAPI document.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AliasScope } from '../../src/client/index.ts';
import { Conformance } from '../helpers/conformance.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { httpError } from '../helpers/status.ts';

let node: TestNode;
let conformance: Conformance;

const IDS: [AliasScope, string][] = [
  ['context', '1a'.repeat(32)],
  ['application', '2b'.repeat(32)],
  ['device', '3c'.repeat(32)],
];

beforeAll(async () => {
  node = await startTestNode();
  conformance = await Conformance.load(node.url);
});
afterAll(() => node.destroy());

it('answers every alias route as documented, in every scope', async () => {
  const admin = conformance.client();
  await admin.auth.login({ username: node.adminUser, password: node.adminPassword });

  for (const [scope, id] of IDS) {
    expect(await admin.aliases.list(scope)).toEqual({});
    await admin.aliases.create(scope, `main-${scope}`, id);
    await admin.aliases.create(scope, 'alpha', id.toUpperCase());
    expect(await admin.aliases.lookup(scope, `main-${scope}`)).toBe(id);
    const list = await admin.aliases.list(scope);
    expect(list).toEqual({ alpha: id, [`main-${scope}`]: id });
    expect(Object.keys(list)).toEqual(['alpha', `main-${scope}`]);

    expect((await httpError(admin.aliases.create(scope, 'alpha', id))).status).toBe(409);
    expect((await httpError(admin.aliases.create(scope, 'has space', id))).status).toBe(400);

    await admin.aliases.delete(scope, `main-${scope}`);
    await admin.aliases.delete(scope, 'alpha');
    expect(await admin.aliases.lookup(scope, `main-${scope}`)).toBeNull();
    expect(await admin.aliases.list(scope)).toEqual({});
  }

  // `identity` is no scope any more: 404 on every verb, before the body is looked at.
  const identity = 'identity' as AliasScope;
  for (const call of [
    () => admin.aliases.create(identity, 'a', IDS[0][1]),
    () => admin.aliases.lookup(identity, 'a'),
    () => admin.aliases.delete(identity, 'a'),
    () => admin.aliases.list(identity),
  ]) {
    const e = await httpError(call());
    expect(e.status).toBe(404);
    expect(e.errorText).toMatch(/Unknown alias scope 'identity'/);
  }

  expect((await httpError(conformance.client().aliases.list('context'))).status).toBe(401);

  conformance.assertAreaCovered('aliases');
});
