import { describe, expect, it } from 'vitest';
import { formatPermission, isValidPermission, parsePermission, satisfies } from './permissions.ts';

describe('permission grammar (auth-wire §6.1)', () => {
  it.each([
    'admin',
    'application',
    'application:list',
    'application:list[app1]',
    'application:install',
    'application:uninstall[app1]',
    'package',
    'package:list-packages',
    'package:list-versions[p]',
    'package:get-latest-version[p]',
    'blob',
    'blob:add',
    'blob:add:stream',
    'blob:add:file',
    'blob:add:url',
    'blob:remove[b]',
    'blob:list',
    'blob:get[b]',
    'namespace[n]',
    'namespace',
    'namespace:create',
    'namespace:list[n]',
    'namespace:manage[n]',
    'group[g]',
    'group:create',
    'group:list[g]',
    'group:manage[g]',
    'context[c]',
    'context[c,pk]',
    'context:create',
    'context:list[c]',
    'context:delete[c]',
    'context:leave[c,u]',
    'context:invite[c,u]',
    'context:execute',
    'context:execute[c,u,m]',
    'context:capabilities:grant[c]',
    'context:capabilities:revoke[c]',
    'context:application:update[c]',
    'context:alias[c]',
    'context:alias:create:context',
    'context:alias:list:application[c]',
    'context:alias:lookup:identity',
    'context:alias:delete:context',
    'keys',
    'keys:create',
    'keys:list',
    'keys:delete',
    'keys:revoke',
    'keys:clients',
    'keys:clients:list',
    'keys:clients:delete',
    'keys:permissions',
    'keys:permissions:get[k]',
    'keys:permissions:update[k]',
    'context:list[*]',
    'context:list[]',
  ])('accepts %s', (s) => {
    expect(isValidPermission(s)).toBe(true);
  });

  it.each([
    '',
    '*',
    'keys:*',
    'application:*',
    'context:*',
    'unknown',
    'Admin',
    'application:remove',
    'package:list',
    'blob:add:ftp',
    'blob:delete',
    'namespace:delete',
    'group:delete',
    'context:execute:x',
    'context:capabilities',
    'context:application',
    'context:alias:create',
    'context:alias:create:device',
    'context:alias:rename:context',
    'keys:update',
    'keys:clients:create',
    'keys:permissions:set',
    'context:',
    'context::list',
    'context:list[c',
    'context:list[c]x',
    'context:list[c]]',
    'context:list[[c]]',
    'context:execute[a,b,c,d]',
    'constructor',
    'keys:constructor',
    // admin is the bare word only: these spellings once read as admin and slipped past the grant rule
    'admin:x',
    'admin[x]',
    'admin:',
    'admin[]',
    'admin ',
    ' admin',
    'admin\u0000',
    // brackets carry only the parameters the action reads
    'application[x]',
    'blob:add[x]',
    'keys:create[x]',
    'application:list[a,b]',
    'context:list[c,u]',
    'context:leave[c,u,m]',
    'context[c,u,m]',
    'x'.repeat(600),
  ])('rejects %j', (s) => {
    expect(parsePermission(s)).toBeNull();
  });

  it('trims parameters', () => {
    expect(parsePermission('application:list[ app1 ]')).toMatchObject({ scope: 'app1', user: null });
  });

  it('reads user and method only where they exist', () => {
    expect(parsePermission('context:execute[c,u,m]')).toEqual({ category: 'context', action: 'execute', scope: 'c', user: 'u', method: 'm' });
    expect(parsePermission('context:leave[c,u]')).toMatchObject({ user: 'u', method: null });
    expect(parsePermission('context[c,u]')).toMatchObject({ scope: 'c', user: null, method: null });
  });

  it('treats empty brackets and an empty first id as global', () => {
    expect(parsePermission('context:list[]')?.scope).toBeNull();
    expect(parsePermission('context:execute[,u]')).toMatchObject({ scope: null, user: 'u' });
  });

  it('accepts empty brackets on actions without a scope', () => {
    expect(parsePermission('keys:create[]')?.scope).toBeNull();
    expect(parsePermission('blob:add[]')?.scope).toBeNull();
  });

  it('treats [*] as a literal id, not a wildcard', () => {
    expect(parsePermission('context:list[*]')?.scope).toBe('*');
    expect(satisfies(['context:list[*]'], 'context:list[abc]')).toBe(false);
  });

  it('maps the keys synonyms to their canonical actions', () => {
    expect(formatPermission(parsePermission('keys:revoke')!)).toBe('keys:delete');
    expect(formatPermission(parsePermission('keys:clients')!)).toBe('keys:clients:list');
    expect(formatPermission(parsePermission('keys:permissions[k]')!)).toBe('keys:permissions:get[k]');
  });

  it.each([
    ['admin', 'admin'],
    ['context[c,pk]', 'context[c]'],
    ['context:execute[c,,m]', 'context:execute[c,,m]'],
    ['context:execute[,u]', 'context:execute[,u]'],
    ['application:list[ a ]', 'application:list[a]'],
    ['blob:add:stream', 'blob:add:stream'],
  ])('formats %s canonically as %s, which parses back to the same permission', (input, canonical) => {
    const p = parsePermission(input)!;
    expect(formatPermission(p)).toBe(canonical);
    expect(parsePermission(canonical)).toEqual(p);
  });
});

describe('satisfaction (auth-wire §6.2)', () => {
  it('admin satisfies everything; admin-like spellings satisfy nothing', () => {
    expect(satisfies(['admin'], 'keys:permissions:update[k]')).toBe(true);
    expect(satisfies(['admin:x'], 'context:execute[c,u,m]')).toBe(false);
    expect(satisfies(['admin[x]'], 'admin')).toBe(false);
    expect(satisfies(['admin'], 'package:list-versions[p]')).toBe(true);
  });

  it('nothing but admin satisfies admin', () => {
    expect(satisfies(['keys', 'application', 'blob', 'context:execute'], 'admin')).toBe(false);
  });

  it('an empty held set satisfies nothing', () => {
    expect(satisfies([], 'context:list')).toBe(false);
  });

  it('an unparseable requirement is never satisfied', () => {
    expect(satisfies(['admin'], 'keys:*')).toBe(false);
    expect(satisfies(['keys:*'], 'keys:*')).toBe(false);
  });

  it('ignores unparseable held strings', () => {
    expect(satisfies(['keys:*', 'application:*', '*'], 'keys:list')).toBe(false);
    expect(satisfies(['garbage', 'context:list'], 'context:list[c]')).toBe(true);
  });

  it('a global scope covers any id; a specific id covers only itself', () => {
    expect(satisfies(['context:list'], 'context:list[c1]')).toBe(true);
    expect(satisfies(['context:list[c1]'], 'context:list[c1]')).toBe(true);
    expect(satisfies(['context:list[c1]'], 'context:list[c2]')).toBe(false);
    expect(satisfies(['context:list[c1]'], 'context:list')).toBe(false);
  });

  it('compares ids exactly', () => {
    expect(satisfies(['context:list[ABC]'], 'context:list[abc]')).toBe(false);
  });

  it('verbs do not cover each other', () => {
    expect(satisfies(['context:list'], 'context:delete[c]')).toBe(false);
    expect(satisfies(['application:list'], 'application:install')).toBe(false);
    expect(satisfies(['namespace:list'], 'namespace:manage[n]')).toBe(false);
  });

  it('different categories never satisfy each other', () => {
    expect(satisfies(['application'], 'context:list')).toBe(false);
    expect(satisfies(['namespace'], 'group:list[g]')).toBe(false);
    expect(satisfies(['keys'], 'blob:list')).toBe(false);
  });

  describe('user and method', () => {
    it('a held any-user covers any user; a specific user only itself', () => {
      expect(satisfies(['context:invite[c]'], 'context:invite[c,u1]')).toBe(true);
      expect(satisfies(['context:invite[c,u1]'], 'context:invite[c,u1]')).toBe(true);
      expect(satisfies(['context:invite[c,u1]'], 'context:invite[c,u2]')).toBe(false);
      expect(satisfies(['context:leave[c,u1]'], 'context:leave[c]')).toBe(false);
    });

    it('a held no-method covers any method; a held method covers only itself', () => {
      expect(satisfies(['context:execute[c]'], 'context:execute[c,,m]')).toBe(true);
      expect(satisfies(['context:execute[c,,m1]'], 'context:execute[c,,m1]')).toBe(true);
      expect(satisfies(['context:execute[c,,m1]'], 'context:execute[c,,m2]')).toBe(false);
    });

    it('oddly, a held method also satisfies a requirement naming no method', () => {
      expect(satisfies(['context:execute[,,m1]'], 'context:execute')).toBe(true);
      expect(satisfies(['context:execute[c,,m1]'], 'context:execute[c]')).toBe(true);
    });

    it('a global context:execute satisfies the JSON-RPC requirement', () => {
      expect(satisfies(['context:execute'], 'context:execute')).toBe(true);
      expect(satisfies(['context:list'], 'context:execute')).toBe(false);
    });
  });

  describe('umbrellas', () => {
    it('application covers every application verb and id', () => {
      expect(satisfies(['application'], 'application:list[a]')).toBe(true);
      expect(satisfies(['application'], 'application:install')).toBe(true);
      expect(satisfies(['application'], 'application:uninstall[a]')).toBe(true);
    });

    it('blob covers every blob verb', () => {
      for (const r of ['blob:add:stream', 'blob:add', 'blob:remove[b]', 'blob:list', 'blob:get[b]']) {
        expect(satisfies(['blob'], r)).toBe(true);
      }
    });

    it('blob:add covers every add sub-verb, and a sub-verb only itself', () => {
      expect(satisfies(['blob:add'], 'blob:add:stream')).toBe(true);
      expect(satisfies(['blob:add'], 'blob:add:url')).toBe(true);
      expect(satisfies(['blob:add'], 'blob:list')).toBe(false);
      expect(satisfies(['blob:add:stream'], 'blob:add:stream')).toBe(true);
      expect(satisfies(['blob:add:stream'], 'blob:add:file')).toBe(false);
      expect(satisfies(['blob:add:stream'], 'blob:add')).toBe(false);
    });

    it('namespace[s] covers every namespace verb within s', () => {
      expect(satisfies(['namespace[n1]'], 'namespace:list[n1]')).toBe(true);
      expect(satisfies(['namespace[n1]'], 'namespace:manage[n1]')).toBe(true);
      expect(satisfies(['namespace[n1]'], 'namespace:manage[n2]')).toBe(false);
      expect(satisfies(['namespace[n1]'], 'namespace:list')).toBe(false);
      expect(satisfies(['namespace'], 'namespace:create')).toBe(true);
    });

    it('group[s] covers every group verb within s', () => {
      expect(satisfies(['group[g1]'], 'group:list[g1]')).toBe(true);
      expect(satisfies(['group[g1]'], 'group:manage[g1]')).toBe(true);
      expect(satisfies(['group[g1]'], 'group:manage[g2]')).toBe(false);
      expect(satisfies(['group[g1]'], 'group:create')).toBe(false);
      expect(satisfies(['group'], 'group:create')).toBe(true);
    });

    it('context:alias[s] covers every alias verb and type within s', () => {
      expect(satisfies(['context:alias'], 'context:alias:create:context')).toBe(true);
      expect(satisfies(['context:alias'], 'context:alias:list:identity')).toBe(true);
      expect(satisfies(['context:alias[c]'], 'context:alias:lookup:application[c]')).toBe(true);
      expect(satisfies(['context:alias[c]'], 'context:alias:lookup:application')).toBe(false);
      expect(satisfies(['context:alias'], 'context:list')).toBe(false);
    });

    it('an alias verb covers only its own type', () => {
      expect(satisfies(['context:alias:create:context'], 'context:alias:create:context')).toBe(true);
      expect(satisfies(['context:alias:create:context'], 'context:alias:create:application')).toBe(false);
      expect(satisfies(['context:alias:create:context'], 'context:alias:delete:context')).toBe(false);
    });

    it('context[s] satisfies only a required context[...], not context verbs', () => {
      expect(satisfies(['context[c]'], 'context[c]')).toBe(true);
      expect(satisfies(['context[c,pk]'], 'context[c]')).toBe(true);
      expect(satisfies(['context'], 'context[c]')).toBe(true);
      expect(satisfies(['context[c]'], 'context[d]')).toBe(false);
      expect(satisfies(['context[c]'], 'context:list[c]')).toBe(false);
      expect(satisfies(['context[c]'], 'context:execute[c]')).toBe(false);
      expect(satisfies(['context'], 'context:list')).toBe(false);
    });

    it('keys covers every keys permission; others need equality, scope included', () => {
      expect(satisfies(['keys'], 'keys:permissions:update[k]')).toBe(true);
      expect(satisfies(['keys'], 'keys:clients:delete')).toBe(true);
      expect(satisfies(['keys:list'], 'keys:list')).toBe(true);
      expect(satisfies(['keys:list'], 'keys:delete')).toBe(false);
      expect(satisfies(['keys:revoke'], 'keys:delete')).toBe(true);
      expect(satisfies(['keys:clients'], 'keys:clients:list')).toBe(true);
      expect(satisfies(['keys:clients:list'], 'keys:clients:delete')).toBe(false);
      expect(satisfies(['keys:permissions:get[k]'], 'keys:permissions:get[k]')).toBe(true);
      expect(satisfies(['keys:permissions:get'], 'keys:permissions:get[k]')).toBe(false);
      expect(satisfies(['keys:permissions:get[k]'], 'keys:permissions:get[j]')).toBe(false);
      expect(satisfies(['keys:permissions:get[k]'], 'keys:permissions:update[k]')).toBe(false);
    });

    it('package has no rule: only the exact string works', () => {
      expect(satisfies(['package:list-versions[p]'], 'package:list-versions[p]')).toBe(true);
      expect(satisfies(['package:list-packages'], 'package:list-packages')).toBe(true);
      expect(satisfies(['package'], 'package:list-packages')).toBe(false);
      expect(satisfies(['package:list-versions'], 'package:list-versions[p]')).toBe(false);
      expect(satisfies(['package:list-versions[p,x]'], 'package:list-versions[p]')).toBe(false);
    });
  });

  it('exact string equality always satisfies a valid requirement', () => {
    expect(satisfies(['context:list[c]'], 'context:list[c]')).toBe(true);
  });
});
