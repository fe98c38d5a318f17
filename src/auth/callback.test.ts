import { describe, expect, it } from 'vitest';
import { isAllowedCallback } from './callback.ts';

const policy = { selfOrigin: 'http://node.example:2428', allowed: ['https://app.example', 'not a url'] };
const ok = (url: string) => isAllowedCallback(url, policy);

describe('isAllowedCallback', () => {
  it('allows loopback hosts on any port and path', () => {
    expect(ok('http://127.0.0.1:5173/cb')).toBe(true);
    expect(ok('http://127.8.9.10/cb')).toBe(true);
    expect(ok('http://localhost:3000/')).toBe(true);
    expect(ok('https://localhost/cb?x=1')).toBe(true);
    expect(ok('http://[::1]:8080/cb')).toBe(true);
    // Other spellings of 127.0.0.1 that the URL parser folds into dotted form.
    expect(ok('http://127.1/cb')).toBe(true);
    expect(ok('http://2130706433/cb')).toBe(true);
  });

  it('allows the page’s own origin', () => {
    expect(ok('http://node.example:2428/app/#x')).toBe(true);
    expect(ok('https://node.example:2428/app')).toBe(false);
    expect(ok('http://node.example:2429/app')).toBe(false);
    expect(isAllowedCallback('https://node.example/cb', { selfOrigin: 'https://node.example:443', allowed: [] })).toBe(true);
  });

  it('allows listed origins and ignores malformed list entries', () => {
    expect(ok('https://app.example/login/done')).toBe(true);
    expect(ok('http://app.example/login/done')).toBe(false);
    expect(isAllowedCallback('https://app.example/cb', { allowed: ['https://app.example/'] })).toBe(true);
    expect(isAllowedCallback('https://x.example/cb', { allowed: ['not a url', 'javascript:alert(1)'] })).toBe(false);
  });

  it('refuses other hosts, look-alikes included', () => {
    expect(ok('https://evil.example/cb')).toBe(false);
    expect(ok('http://127.0.0.1.evil.example/cb')).toBe(false);
    expect(ok('http://localhost.evil.example/cb')).toBe(false);
    expect(ok('http://app.example.evil.example/cb')).toBe(false);
    expect(ok('http://[::ffff:127.0.0.2]/cb')).toBe(false);
    expect(isAllowedCallback('http://127.0.0.1/cb', { allowed: [] })).toBe(true);
    expect(isAllowedCallback('http://node.example/cb', { allowed: [] })).toBe(false);
  });

  it('refuses schemes other than http(s)', () => {
    expect(ok('javascript:alert(document.cookie)')).toBe(false);
    expect(ok('data:text/html,<script>alert(1)</script>')).toBe(false);
    expect(ok('file:///etc/passwd')).toBe(false);
    expect(ok('ftp://127.0.0.1/cb')).toBe(false);
    expect(ok('ws://127.0.0.1/cb')).toBe(false);
  });

  it('refuses malformed and relative addresses', () => {
    expect(ok('')).toBe(false);
    expect(ok('not a url')).toBe(false);
    expect(ok('/relative/cb')).toBe(false);
    expect(ok('//evil.example/cb')).toBe(false);
    expect(ok('http://')).toBe(false);
  });

  it('refuses userinfo tricks', () => {
    expect(ok('http://127.0.0.1@evil.com/cb')).toBe(false);
    expect(ok('http://localhost:80@evil.com/cb')).toBe(false);
    expect(ok('http://user:pass@127.0.0.1/cb')).toBe(false);
    expect(ok('https://app.example@evil.com/')).toBe(false);
  });
});
