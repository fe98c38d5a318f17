/**
 * The guard's two modes for the delegated-execution routes (admin spec "Authentication" rule 3):
 * with `admin.delegated_access` the four routes are public and the warrant is the credential;
 * without it they need `admin` (auth-wire §5.2 "intents … → admin") or, under `/groups`, the
 * group's permission. The TEE information and attestation routes are public in both modes.
 */
import { describe, expect, it } from 'vitest';
import { classifyRoute } from './route-permissions.ts';

const C = 'c'.repeat(64);
const G = 'a'.repeat(64);

const DELEGATED: [string, string, string][] = [
  ['GET', `/admin-api/contexts/${C}/intents`, 'admin'],
  ['POST', `/admin-api/contexts/${C}/intents`, 'admin'],
  ['POST', `/admin-api/contexts/${C}/presence-intents`, 'admin'],
  ['GET', `/admin-api/groups/${G}/context-intents`, `group:list[${G}]`],
  ['POST', `/admin-api/groups/${G}/context-intents`, `group:manage[${G}]`],
  ['GET', `/admin-api/groups/${G}/governance-intents`, `group:list[${G}]`],
  ['POST', `/admin-api/groups/${G}/governance-intents`, `group:manage[${G}]`],
];

describe('delegated-execution routes', () => {
  it.each(DELEGATED)('%s %s is guarded by default (%s)', (method, path, permission) => {
    expect(classifyRoute(method, path)).toMatchObject({ kind: 'guarded', permission });
    expect(classifyRoute(method, path, { delegatedAccess: false })).toMatchObject({ kind: 'guarded', permission });
  });

  it.each(DELEGATED)('%s %s is public with delegated_access', (method, path) => {
    expect(classifyRoute(method, path, { delegatedAccess: true })).toEqual({ kind: 'public' });
  });

  it('opens nothing else with delegated_access', () => {
    for (const [method, path] of [
      ['POST', `/admin-api/contexts/${C}/query`],
      ['DELETE', `/admin-api/contexts/${C}/intents`],
      ['POST', `/admin-api/groups/${G}/upgrade`],
      ['POST', `/admin-api/groups/${G}/context-intents/x`],
      ['POST', '/jsonrpc'],
    ]) {
      expect(classifyRoute(method, path, { delegatedAccess: true }).kind).toBe('guarded');
    }
  });
});

describe('TEE routes', () => {
  it('serves information and attestation publicly and guards registration attestation', () => {
    for (const delegatedAccess of [false, true]) {
      expect(classifyRoute('GET', '/admin-api/tee/info', { delegatedAccess })).toEqual({ kind: 'public' });
      expect(classifyRoute('POST', '/admin-api/tee/attest', { delegatedAccess })).toEqual({ kind: 'public' });
      expect(classifyRoute('POST', '/admin-api/tee/registration-attest', { delegatedAccess })).toMatchObject({ kind: 'guarded', permission: 'admin' });
      expect(classifyRoute('POST', '/admin-api/tee/verify-quote', { delegatedAccess })).toMatchObject({ kind: 'guarded', permission: 'admin' });
    }
  });
});
