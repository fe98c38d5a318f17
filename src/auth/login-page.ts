/**
 * `GET /auth/login`: the node's own login page (auth-wire §2.5; product.md B7, A15). Serves
 * `web/login.html` with the operator's callback allow-list injected for the page's own check, and
 * refuses a `callback-url` that may not receive tokens with a 400 page that has no form, so a
 * crafted link never gets as far as a password prompt.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hostOf } from '../http/request.ts';
import { Text } from '../http/response-schemas.ts';
import { isAllowedCallback } from './callback.ts';
import type { AuthRoutesDeps } from './route-deps.ts';
import { LoginPageQuery } from './schemas.ts';
import { setSecurityHeaders } from './security-headers.ts';

const TEMPLATE_URL = new URL('../../web/login.html', import.meta.url);
const CONFIG_SLOT = '<script id="hearth-config" type="application/json">{}</script>';
const FORM_REGION = /<!--hearth:form-->[\s\S]*<!--\/hearth:form-->/;

interface PageConfig {
  allowedCallbackOrigins: string[];
  refused?: string;
}

/** JSON that cannot end its `<script>` element early (`</script>`, `<!--`) nor be read as markup. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function render(template: string, config: PageConfig): string {
  // Function replacers: a `$` in the injected text must not be read as a replacement pattern.
  const page = template.replace(CONFIG_SLOT, () => CONFIG_SLOT.replace('{}', scriptJson(config)));
  if (config.refused === undefined) return page;
  const refusal =
    `<div class="alert error" role="alert"><strong>Sign-in refused.</strong> ` +
    `This application&#39;s address is not allowed to receive tokens: <code>${escapeHtml(config.refused)}</code></div>` +
    `<p class="muted">If you run this application, serve it from a loopback address or add its origin to ` +
    `<code>allowed_callback_origins</code> in the <code>[auth]</code> section of the node's config.toml.</p>`;
  return page.replace(FORM_REGION, () => refusal);
}

/** What the refusal names: the origin a browser would send the tokens to, or the raw value when there is none. */
function destinationOf(callback: string): string {
  try {
    const u = new URL(callback);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.origin;
  } catch {
    /* not a URL: show it as given */
  }
  return callback.length > 200 ? `${callback.slice(0, 200)}…` : callback;
}

/**
 * The origin the browser used to reach this page: the request's scheme and host, which come from
 * X-Forwarded-Proto / X-Forwarded-Host only when the node trusts a proxy (`server.trust_proxy`); a
 * browser cannot set those headers on a navigation, so a crafted link cannot forge them.
 */
function selfOriginOf(req: FastifyRequest): string | undefined {
  const host = hostOf(req);
  return host ? `${req.protocol}://${host}` : undefined;
}

function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  setSecurityHeaders(reply);
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-cache, no-store, must-revalidate')
    .header('pragma', 'no-cache')
    .header('expires', '0')
    .send(html);
}

export function registerLoginPage(app: FastifyInstance, deps: AuthRoutesDeps): void {
  const template = readFileSync(TEMPLATE_URL, 'utf8');
  // A template edit that loses a marker would silently ship a page without the allow-list or
  // without the refusal; fail at start-up instead.
  if (!template.includes(CONFIG_SLOT) || !FORM_REGION.test(template)) {
    throw new Error(`${TEMPLATE_URL.pathname} lacks the hearth-config slot or the hearth:form markers`);
  }
  const allowed = [...deps.allowedCallbackOrigins];
  const page = render(template, { allowedCallbackOrigins: allowed });

  const schema = {
    summary: 'The login page (HTML)',
    querystring: LoginPageQuery,
    response: {
      200: Text('text/html', 'The login page'),
      400: Text('text/html', 'The page without its form: callback-url may not receive tokens'),
    },
  };
  app.get('/auth/login', { config: { errorStyle: 'auth' }, schema }, async (req, reply) => {
    // The first value, as the page's own URLSearchParams reads it.
    const q = req.url.indexOf('?');
    const callback = q === -1 ? '' : (new URLSearchParams(req.url.slice(q + 1)).get('callback-url') ?? '').trim();
    if (callback && !isAllowedCallback(callback, { selfOrigin: selfOriginOf(req), allowed })) {
      return sendPage(reply, 400, render(template, { allowedCallbackOrigins: allowed, refused: destinationOf(callback) }));
    }
    return sendPage(reply, 200, page);
  });
}
