/**
 * The conformance areas cover the whole API: every operation of the OpenAPI document belongs to
 * exactly one area, and each area has its conformance test file (which asserts that all its
 * operations were exercised through the SDK and matched their schemas).
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AREAS, Conformance } from '../helpers/conformance.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

let node: TestNode;
let conformance: Conformance;

beforeAll(async () => {
  node = await startTestNode();
  conformance = await Conformance.load(node.url);
});
afterAll(() => node.destroy());

it('assigns every documented operation to exactly one area', () => {
  const orphans: string[] = [];
  for (const { method, template } of conformance.operations()) {
    const owners = Object.keys(AREAS).filter((area) => AREAS[area](method, template));
    if (owners.length !== 1) orphans.push(`${method} ${template} → [${owners.join(', ')}]`);
  }
  expect(orphans).toEqual([]);
});

it('has a conformance test file per area', () => {
  const missing = Object.keys(AREAS).filter((area) => !existsSync(new URL(`./${area}.conformance.test.ts`, import.meta.url)));
  expect(missing).toEqual([]);
});
