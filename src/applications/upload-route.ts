/**
 * hearth: `PUT /admin-api/install-dev-application/bundle` — a dev install of a signed `.mpk` sent
 * as the request body (issue #16: the dashboard installs a file the user picks in the browser,
 * which is not on the node's filesystem for `POST /install-dev-application {path}`). The same
 * verification as every install; the node guard requires `admin` (an unmapped `/admin-api` route);
 * a node with `dev_install_root` set refuses (403). Documented in docs/applications.md.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { badRequest } from '../errors.ts';
import { Errors } from '../http/response-schemas.ts';
import { MAX_BUNDLE_BYTES } from './constants.ts';
import { ApplicationIdAnswer } from './schemas.ts';
import type { ApplicationService } from './service.ts';

const BundleBody = {
  content: { 'application/octet-stream': { schema: Type.String({ format: 'binary', description: 'the signed .mpk bundle' }) } },
};

export function registerBundleUploadRoute(root: FastifyInstance, deps: { applications: ApplicationService }): void {
  // An encapsulated scope, so the raw-body parser applies to this route only.
  root.register(async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: MAX_BUNDLE_BYTES }, (_req, body, done) => done(null, body));
    const schema = {
      summary: 'hearth: install a signed .mpk sent as the body (dev install of an uploaded bundle)',
      response: { 200: ApplicationIdAnswer, ...Errors(400, 401, 403, 413, 415) },
    };
    app.put('/admin-api/install-dev-application/bundle', { schema, config: { docs: { body: BundleBody } }, bodyLimit: MAX_BUNDLE_BYTES }, async (req) => {
      const body = req.body;
      if (!Buffer.isBuffer(body) || body.length === 0) throw badRequest('send the signed .mpk bundle as the body (content-type: application/octet-stream)');
      return { data: await deps.applications.installUpload(new Uint8Array(body.buffer, body.byteOffset, body.length)) };
    });
  });
}
