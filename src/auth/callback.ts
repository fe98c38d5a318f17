/**
 * Where the login page may hand tokens (product.md A15, B7 step 4; auth-frontend
 * `src/utils/callbackUrl.ts`). Tokens travel in the callback URL's fragment, so an unchecked
 * `callback-url` is a token-exfiltration link: anyone could mail a victim a login link that sends
 * their fresh key to an attacker's site. Allowed: http(s) only, and a loopback host, the node's own
 * origin, or an origin the operator listed (`auth.allowed_callback_origins`).
 *
 * Pure; `login-page.ts` applies it on the server and `web/login.html` repeats it in the browser.
 * Keep the two in step.
 */

export interface CallbackPolicy {
  /** the origin the login page was served from (scheme://host[:port]) */
  selfOrigin?: string;
  /** operator-listed origins; malformed entries are ignored */
  allowed: string[];
}

/** 127.0.0.0/8, localhost and [::1]. The WHATWG parser has already folded `127.1`, `2130706433`, … into dotted form. */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

function originOf(value: string): string | undefined {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

export function isAllowedCallback(url: string, opts: CallbackPolicy): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  // `http://127.0.0.1@evil.com` names evil.com; the parser gets that right, but a userinfo part has
  // no honest use in a callback and only serves to fool a human reading the link.
  if (u.username || u.password) return false;
  if (isLoopback(u.hostname)) return true;
  if (opts.selfOrigin && originOf(opts.selfOrigin) === u.origin) return true;
  return opts.allowed.some((entry) => originOf(entry) === u.origin);
}
