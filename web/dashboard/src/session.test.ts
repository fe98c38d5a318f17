import { describe, expect, it } from 'vitest';
import { loginUrl } from './session.ts';

describe('loginUrl', () => {
  const here = { origin: 'http://127.0.0.1:2528', pathname: '/admin-dashboard/contexts', search: '?context=abc' };

  it('comes back to the page the user was on, query included', () => {
    const url = new URL(loginUrl(undefined, here), here.origin);
    expect(url.pathname).toBe('/auth/login');
    expect(url.searchParams.get('callback-url')).toBe('http://127.0.0.1:2528/admin-dashboard/contexts?context=abc');
    expect(url.searchParams.get('permissions')).toBe('admin');
    expect(url.searchParams.has('reason')).toBe(false);
  });

  it('carries the reason the session ended', () => {
    const url = new URL(loginUrl('token_revoked', { ...here, search: '' }), here.origin);
    expect(url.searchParams.get('callback-url')).toBe('http://127.0.0.1:2528/admin-dashboard/contexts');
    expect(url.searchParams.get('reason')).toBe('token_revoked');
  });
});
