/**
 * The one place where errors become HTTP answers (style rule 4). Bodies are `{"error": "..."}`;
 * routes of the auth surface answer `{"data": null, "error": "..."}` as the reference's auth
 * handlers do (auth-wire §1.2). Guard rejections carry their reason in `X-Auth-Error`.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { HearthError } from '../errors.ts';
import { closeAfterAnswer } from './linger.ts';
import { STATUS_OF } from './status.ts';

export type ErrorStyle = 'admin' | 'auth';

declare module 'fastify' {
  interface FastifyContextConfig {
    errorStyle?: ErrorStyle;
  }
}

export function errorBody(style: ErrorStyle | undefined, message: string, extra?: Record<string, unknown>) {
  return style === 'auth' ? { data: null, error: message, ...extra } : { error: message, ...extra };
}

/** Fastify's own client errors (bad JSON, media type, body size) keep their 4xx status. */
function clientStatusOf(err: FastifyError): number | undefined {
  const s = err.statusCode;
  return s !== undefined && s >= 400 && s < 500 ? s : undefined;
}

/** A HearthError's answer: its status, `X-Auth-Error` and `Retry-After` when it carries them, the error body. */
export function hearthAnswer(err: HearthError, style: ErrorStyle | undefined): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  const { authReason, retryAfterSecs, body } = err.extra;
  const headers: Record<string, string> = {};
  if (authReason) headers['x-auth-error'] = authReason;
  if (retryAfterSecs !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterSecs)));
  return { status: STATUS_OF[err.kind], headers, body: errorBody(style, err.message, body) };
}

export function handleError(err: FastifyError | HearthError | Error, request: FastifyRequest, reply: FastifyReply) {
  const style = request.routeOptions?.config?.errorStyle;
  if (err instanceof HearthError) {
    const a = hearthAnswer(err, style);
    return reply.code(a.status).headers(a.headers).send(a.body);
  }
  const fe = err as FastifyError;
  if (fe.validation) {
    return reply.code(400).send(errorBody(style, fe.message));
  }
  const exhausted = exhaustionOf(err);
  if (exhausted && DISK_FULL.has(exhausted)) {
    // the disk is full (blobs stop at their reserve, so something else filled it): the request is
    // refused, the node stays up; not worth retrying until someone frees space (issue #37 item 1)
    request.log.warn({ code: exhausted }, 'request refused: the disk is full');
    closeAfterAnswer(reply.raw);
    return reply.code(507).send(errorBody(style, `The disk holding the node's home is full (${exhausted}: no space left on the device); the request was refused`));
  }
  if (exhausted) {
    // the node ran out of a resource (descriptors, disk): the caller may retry; not a bug
    request.log.warn({ code: exhausted }, 'request refused: resource exhausted');
    reply.header('retry-after', '5');
    return reply.code(503).send(errorBody(style, `The node is out of resources (${exhausted}); retry later`));
  }
  const status = clientStatusOf(fe);
  if (status !== undefined) {
    const message = fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError ? `Invalid JSON: ${fe.message}` : fe.message;
    return reply.code(status).send(errorBody(style, message));
  }
  request.log.error({ err }, 'unhandled error');
  return reply.code(500).send(errorBody(style, `Internal server error (request ${request.id})`));
}

/** System errors that mean the node is out of a resource rather than that the request was wrong. */
const EXHAUSTION_CODES = new Set(['EMFILE', 'ENFILE', 'ENOSPC', 'EDQUOT', 'ENOMEM', 'EAGAIN']);
/** ...of which these mean the disk (or the user's disk quota) is full: 507 */
const DISK_FULL = new Set(['ENOSPC', 'EDQUOT']);

function exhaustionOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && EXHAUSTION_CODES.has(code) ? code : undefined;
}

interface AjvLikeError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Turns the validator's first complaint into a sentence that names the field. */
export function formatValidation(errors: AjvLikeError[], dataVar: string): Error {
  const e = errors[0];
  if (!e) return new Error(`Invalid ${dataVar}`);
  const path = e.instancePath.split('/').filter(Boolean).join('.');
  const at = (name?: string) => [dataVar, path, name].filter(Boolean).join('.');
  let text: string;
  if (e.keyword === 'required') text = `${at(String(e.params.missingProperty))} is required`;
  else if (e.keyword === 'additionalProperties') text = `${at()} has an unknown field "${String(e.params.additionalProperty)}"`;
  else text = `${at()} ${e.message ?? 'is invalid'}`;
  return new Error(`Invalid request: ${text}`);
}
