/**
 * The OpenAPI document is complete (issue #6): every route the node registers is in
 * `GET /admin-api/openapi.json`, with a schema for its success answer and for each path parameter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../../src/client/index.ts';
import { openApiPath } from '../../../src/http/openapi.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';

type Json = Record<string, any>;

describe('GET /admin-api/openapi.json', () => {
  let node: TestNode;
  let doc: Json;

  beforeAll(async () => {
    node = await startTestNode();
    doc = (await createClient({ baseUrl: node.url }).admin.openApi()) as Json;
  });
  afterAll(() => node.destroy());

  it('is an OpenAPI 3.1 document that needs no token', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/admin-api/health'].get.security).toBeUndefined();
    expect(doc.paths['/admin-api/contexts'].get.security).toEqual([{ bearer: [] }]);
  });

  it('lists every registered route', () => {
    expect(node.node.routes.length).toBeGreaterThan(100);
    const missing = node.node.routes.filter((r) => !doc.paths[openApiPath(r.url)]?.[r.method.toLowerCase()]);
    expect(missing.map((r) => `${r.method} ${r.url}`)).toEqual([]);
  });

  it('gives every route a schema for its success answer', () => {
    const bare: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(ops as Record<string, Json>)) {
        const ok = Object.entries(op.responses ?? {}).some(
          ([status, r]) =>
            (status.startsWith('2') && Object.values((r as Json).content ?? {}).some((c) => (c as Json).schema)) ||
            // a WebSocket upgrade succeeds with 101 and no body: its description is the schema
            (status === '101' && typeof (r as Json).description === 'string'),
        );
        if (!ok) bare.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(bare).toEqual([]);
  });

  it('describes every path parameter', () => {
    const undescribed: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Json>)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries(ops as Record<string, Json>)) {
        const declared = new Set(((op.parameters ?? []) as Json[]).filter((p) => p.in === 'path').map((p) => p.name));
        for (const name of names) if (!declared.has(name)) undescribed.push(`${method.toUpperCase()} ${path} {${name}}`);
      }
    }
    expect(undescribed).toEqual([]);
  });
});
