/**
 * The node's dashboard (issue #16; product.md B5 `GET /admin-dashboard/*`, A14): the single-page
 * app built by `npm run build:web` (scripts/build-web.ts) into `build/dashboard/`, served from that
 * directory. `GET /` sends a browser there; the app itself sends a visitor who is not signed in to
 * the login page (`/auth/login`), so the node needs no cookie to tell the two apart.
 *
 * Pages are client-side paths of one segment (`/admin-dashboard/contexts`): each answers the
 * app's `index.html`. Assets carry a content hash in their names and are cached for good; the
 * page itself is never cached, so a rebuilt dashboard is picked up on the next load. Everything
 * is served under a strict content security policy: scripts, styles and calls from this origin
 * only, no framing.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Where `npm run build:web` writes the dashboard (scripts/build-web.ts `DASHBOARD_OUT`). */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../build/dashboard/', import.meta.url));

export const DASHBOARD_PATH = '/admin-dashboard/';

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const ASSET_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.[a-z]+$/;

const NOT_BUILT =
  '<!doctype html><meta charset="utf-8"><title>Dashboard not built · hearth</title>' +
  '<h1>The dashboard has not been built</h1>' +
  '<p>In the hearth checkout, run <code>npm run build:web</code> (or start the node with <code>npm start</code>, which builds it), then reload this page.</p>';

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer');
}

export interface DashboardRouteDeps {
  /** the built dashboard (default {@link DASHBOARD_DIR}) */
  dir?: string;
}

export function registerDashboardRoutes(app: FastifyInstance, deps: DashboardRouteDeps = {}): void {
  const dir = deps.dir ?? DASHBOARD_DIR;

  const sendIndex = async (reply: FastifyReply) => {
    secure(reply).header('cache-control', 'no-cache');
    let html: string;
    try {
      html = await readFile(join(dir, 'index.html'), 'utf8');
    } catch {
      return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT);
    }
    return reply.code(200).type('text/html; charset=utf-8').send(html);
  };

  // The page and its files are no part of the API: left out of the OpenAPI document (`hide`).
  const hidden = (summary: string) => ({ schema: { hide: true, summary } as never });

  // A browser opening the node's address lands on the dashboard (not a 404).
  app.get('/', hidden('Redirect to the dashboard'), async (_req, reply) => reply.redirect(DASHBOARD_PATH, 302));

  // ignoreTrailingSlash: `/admin-dashboard` and `/admin-dashboard/` are this one route.
  app.get('/admin-dashboard', hidden('The dashboard (HTML)'), async (_req, reply) => sendIndex(reply));
  app.get('/admin-dashboard/:page', hidden('A page of the dashboard (the same app; the browser routes it)'), async (_req, reply) =>
    sendIndex(reply),
  );

  app.get(
    '/admin-dashboard/assets/:file',
    hidden("The dashboard's built scripts and styles (content-hashed names, cached for good)"),
    async (req, reply) => {
      const { file } = req.params as { file: string };
      const type = TYPES[extname(file)];
      const path = join(dir, 'assets', file);
      // names are the build's own: no separators, no dot segments
      const found = type && ASSET_NAME.test(file) ? await stat(path).then((s) => s.isFile(), () => false) : false;
      secure(reply);
      if (!found) return reply.code(404).type('text/plain; charset=utf-8').send('No such asset');
      return reply
        .code(200)
        .type(type)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .send(createReadStream(path));
    },
  );
}
