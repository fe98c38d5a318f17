/**
 * The Blobs table of the admin surface (admin spec "Blobs"; admin-wire-a §5): raw streamed upload,
 * listing, download and HEAD with the reference's headers plus `X-Blob-Source`, and a reference-
 * counted delete. Bodies are snake_case (`blob_id`); ids are 64 lowercase hex. The node guard
 * (auth/route-permissions.ts) has already checked the `blob:*` permission when a handler runs.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { EXPOSED_HEADERS } from '../http/cors.ts';
import { closeAfterAnswer } from '../http/linger.ts';
import { Errors } from '../http/response-schemas.ts';
import { DEFAULT_MIME } from './mime.ts';
import { DEFAULT_MAX_BLOB_BYTES } from './store.ts';
import {
  DeleteBlobResponse,
  DownloadResponse,
  IdParams,
  InfoResponse,
  ListBlobsResponse,
  LookupQuery,
  UploadBody,
  UploadQuery,
  UploadResponse,
} from './schemas.ts';
import type { BlobService } from './service.ts';
import type { BlobInfo } from '../wire/blobs.ts';

export interface BlobRoutesDeps {
  blobs: BlobService;
}

/** admin-wire-a §1.6/§5.2: the reference's blob list, plus the headers the TS node adds. */
export const BLOB_EXPOSED_HEADERS = [
  'X-Blob-ID',
  'X-Blob-Hash',
  'X-Blob-MIME-Type',
  'ETag',
  'X-Blob-Source',
  'Content-Length',
  EXPOSED_HEADERS,
].join(', ');

function setBlobHeaders(reply: FastifyReply, info: BlobInfo): void {
  reply.header('x-blob-id', info.blobId);
  reply.header('x-blob-source', info.source);
  reply.header('cache-control', 'private, no-cache');
  reply.header('access-control-expose-headers', BLOB_EXPOSED_HEADERS);
  if (info.size !== undefined) reply.header('content-length', String(info.size));
  if (info.hash) {
    reply.header('x-blob-hash', info.hash);
    reply.header('etag', `"${info.hash}"`);
  }
  if (info.mimeType) reply.header('x-blob-mime-type', info.mimeType);
  reply.header('content-type', info.mimeType ?? DEFAULT_MIME);
}

export function registerBlobRoutes(root: FastifyInstance, deps: BlobRoutesDeps): void {
  const { blobs } = deps;
  // An encapsulated scope, so the pass-through body parsers apply to these routes only.
  root.register(async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();
    const passThrough = (_req: unknown, payload: NodeJS.ReadableStream, done: (err: null, body: unknown) => void) =>
      done(null, payload);
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/octet-stream', passThrough);
    app.addContentTypeParser('*', passThrough);

    const uploadSchema = {
      summary: "Upload raw bytes (streamed; no size limit but the store's)",
      querystring: UploadQuery,
      response: { 200: UploadResponse, ...Errors(400, 401, 403, 413, 507) },
    };
    app.put(
      '/admin-api/blobs',
      { schema: uploadSchema, config: { docs: { body: UploadBody } }, bodyLimit: DEFAULT_MAX_BLOB_BYTES },
      async (req, reply) => {
        // no body at all (no content-length, no transfer-encoding) is an empty blob
        const body = (req.body ?? Readable.from([])) as AsyncIterable<Uint8Array>;
        // Content-Length is digits here (http/app.ts refused anything else with 400)
        const length = req.headers['content-length'];
        const declaredBytes = length === undefined ? undefined : Number(length);
        try {
          // the query is validated (400), and room for the declared size granted (507), before any byte of the body is read
          const r = await blobs.upload(body, { hash: req.query.hash, contextId: req.query.context_id, declaredBytes });
          return { data: { blob_id: r.blobId, size: r.size } };
        } catch (err) {
          // what is left of the body is not stored: the connection ends after the answer (lingering, so the client reads it)
          closeAfterAnswer(reply.raw);
          throw err;
        }
      },
    );

    const listSchema = { summary: 'Every blob this node holds', response: { 200: ListBlobsResponse, ...Errors(401, 403) } };
    app.get('/admin-api/blobs', { schema: listSchema }, async () => {
      const list = await blobs.list();
      return { data: { blobs: list.map((b) => ({ blob_id: b.blobId, size: b.size })) } };
    });

    const lookupErrors = Errors(400, 401, 403, 404, 502);
    const infoSchema = {
      summary: 'Blob information, in headers',
      params: IdParams,
      querystring: LookupQuery,
      response: { 200: InfoResponse, ...lookupErrors },
    };
    app.head('/admin-api/blobs/:id', { schema: infoSchema }, async (req, reply) => {
      setBlobHeaders(reply, await blobs.info(req.params.id, req.query.context_id));
      return reply.code(200).send();
    });

    app.get(
      '/admin-api/blobs/:id',
      {
        schema: {
          summary: 'Download the content',
          params: IdParams,
          querystring: LookupQuery,
          response: { 200: DownloadResponse, ...lookupErrors },
        },
        exposeHeadRoute: false,
      },
      async (req, reply) => {
        const { info, body } = await blobs.open(req.params.id, req.query.context_id);
        setBlobHeaders(reply, info);
        return reply.code(200).send(Readable.from(body, { objectMode: false }));
      },
    );

    const deleteSchema = {
      summary: 'Drop one reference to a blob (flat answer)',
      params: IdParams,
      response: { 200: DeleteBlobResponse, ...Errors(400, 401, 403, 404) },
    };
    app.delete('/admin-api/blobs/:id', { schema: deleteSchema }, async (req) => {
      const r = await blobs.delete(req.params.id);
      return { blob_id: r.blobId, deleted: r.deleted };
    });
  });
}
