/**
 * Reply helpers shared by route modules. Several reference routes answer a bare 200 with no body
 * (documented with `Empty` in response-schemas.ts); official clients read nothing from it.
 */
import type { FastifyReply } from 'fastify';

/** A 200 with an empty body. */
export const emptyOk = (reply: FastifyReply) => reply.code(200).send();
