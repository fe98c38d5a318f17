/**
 * Compares wire shapes with the spec's key lists (test/fixtures/spec-fields.ts): a route's 200
 * schema in the OpenAPI document, or a live answer, against the shape the spec gives it. Reports
 * every key the spec does not declare, by its dotted path (`data.contexts[].sync`), so a hearth
 * addition in a spec-shaped body fails with its name.
 */
import type { Shape } from '../fixtures/spec-fields.ts';

type Json = Record<string, any>;

/** Keys a JSON schema lets through that `shape` does not declare (`allowed`: dotted paths of documented extensions). */
export function undeclaredInSchema(schema: Json, shape: Shape, allowed: ReadonlySet<string> = new Set(), at = ''): string[] {
  if (shape.kind === 'json') return [];
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) return branches.flatMap((b) => undeclaredInSchema(b, shape, allowed, at));
  if (schema.type === 'null' || schema.const === null) return [];
  if (shape.kind === 'union') {
    // a schema branch fits when some alternative declares all its keys
    const tries = shape.of.map((alt) => undeclaredInSchema(schema, alt, allowed, at));
    return tries.some((t) => t.length === 0) ? [] : tries.reduce((x, y) => (y.length < x.length ? y : x));
  }
  const isObject = schema.type === 'object' || schema.properties !== undefined || schema.patternProperties !== undefined;
  if (isObject) {
    if (shape.kind === 'map') {
      const values = [...Object.values((schema.patternProperties ?? {}) as Json), ...(typeof schema.additionalProperties === 'object' ? [schema.additionalProperties] : [])];
      return values.flatMap((v) => undeclaredInSchema(v as Json, shape.values, allowed, `${at}.*`));
    }
    if (shape.kind !== 'object') return [`${at || '(root)'}: an object where the spec has a ${shape.kind}`];
    const out: string[] = [];
    for (const [key, sub] of Object.entries((schema.properties ?? {}) as Json)) {
      const path = at ? `${at}.${key}` : key;
      if (allowed.has(path)) continue;
      const declared = shape.keys[key];
      if (!declared) out.push(path);
      else out.push(...undeclaredInSchema(sub as Json, declared, allowed, path));
    }
    // an open object (keys beyond `properties`) lets any key through
    if (schema.patternProperties || (schema.additionalProperties !== undefined && schema.additionalProperties !== false)) out.push(`${at || '(root)'}.*: open to any key`);
    return out;
  }
  if (schema.type === 'array') {
    if (shape.kind !== 'array') return [`${at || '(root)'}: an array where the spec has a ${shape.kind}`];
    return undeclaredInSchema((schema.items ?? {}) as Json, shape.items, allowed, `${at}[]`);
  }
  // a scalar schema; an untyped one (`Type.Unknown`) where the spec has structure would hide keys
  if (schema.type === undefined && shape.kind !== 'scalar') return [`${at || '(root)'}: untyped where the spec has a ${shape.kind}`];
  return [];
}

/** Keys a live answer carries that `shape` does not declare. */
export function undeclaredInValue(value: unknown, shape: Shape, allowed: ReadonlySet<string> = new Set(), at = ''): string[] {
  if (shape.kind === 'json' || value === null || value === undefined) return [];
  if (shape.kind === 'union') {
    const tries = shape.of.map((alt) => undeclaredInValue(value, alt, allowed, at));
    return tries.some((t) => t.length === 0) ? [] : tries.reduce((x, y) => (y.length < x.length ? y : x));
  }
  if (Array.isArray(value)) {
    if (shape.kind !== 'array') return [`${at || '(root)'}: an array where the spec has a ${shape.kind}`];
    return value.flatMap((v) => undeclaredInValue(v, shape.items, allowed, `${at}[]`));
  }
  if (typeof value === 'object') {
    if (shape.kind === 'map') return Object.values(value).flatMap((v) => undeclaredInValue(v, shape.values, allowed, `${at}.*`));
    if (shape.kind !== 'object') return [`${at || '(root)'}: an object where the spec has a ${shape.kind}`];
    const out: string[] = [];
    for (const [key, v] of Object.entries(value)) {
      const path = at ? `${at}.${key}` : key;
      if (allowed.has(path)) continue;
      const declared = shape.keys[key];
      if (!declared) out.push(path);
      else out.push(...undeclaredInValue(v, declared, allowed, path));
    }
    return [...new Set(out)];
  }
  return [];
}

/** Object schemas inside a spec-shaped answer that are not closed (`additionalProperties: false`). */
export function openObjects(schema: Json, shape: Shape, at = ''): string[] {
  if (shape.kind === 'json') return [];
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) return branches.flatMap((b) => (shape.kind === 'union' ? shape.of.flatMap((alt) => (undeclaredInSchema(b, alt).length === 0 ? openObjects(b, alt, at) : [])) : openObjects(b, shape, at)));
  if (shape.kind === 'union') return shape.of.flatMap((alt) => (undeclaredInSchema(schema, alt).length === 0 ? openObjects(schema, alt, at) : [])).slice(0, 1);
  if (schema.type === 'array' && shape.kind === 'array') return openObjects((schema.items ?? {}) as Json, shape.items, `${at}[]`);
  if (schema.properties && shape.kind === 'object') {
    const own = schema.additionalProperties === false ? [] : [at || '(root)'];
    return [...own, ...Object.entries(schema.properties as Json).flatMap(([k, sub]) => (shape.keys[k] ? openObjects(sub as Json, shape.keys[k], at ? `${at}.${k}` : k) : []))];
  }
  return [];
}
