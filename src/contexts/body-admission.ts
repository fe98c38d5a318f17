/**
 * The routes' side of back-pressure (issue #23 §4; admission.ts): a large request body of a method
 * call (`POST /jsonrpc`, `POST /admin-api/contexts/{id}/query`) counts toward the node's pending
 * bytes from its `Content-Length`, before it is read; past the bound the request is refused with
 * 503 and `Retry-After`, and the connection closed (its body stays unread).
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { CallAdmission } from './admission.ts';

/** bodies from this size on are counted (smaller ones cost less than counting them) */
export const LARGE_BODY_BYTES = 64 * 1024;

export type BodyAdmission = Pick<CallAdmission, 'reserveBody'>;

/** An `onRequest` hook counting the body while the request is answered (released when its response closes). */
export function countLargeBodies(admission: BodyAdmission) {
  return (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const length = Number(req.headers['content-length'] ?? 0);
    if (!(length >= LARGE_BODY_BYTES)) return done();
    try {
      reply.raw.once('close', admission.reserveBody(length));
    } catch (err) {
      reply.header('connection', 'close');
      return done(err as Error);
    }
    done();
  };
}
