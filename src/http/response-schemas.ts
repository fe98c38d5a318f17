/**
 * Building blocks for response schemas (issue #6 OpenAPI). Routes declare `schema.response` with
 * these so the OpenAPI document shows the wire shapes of the reference README: most answers are
 * `{"data": …}`, some are flat, errors are `{"error": "<message>"}`, u64 values are bare JSON
 * integers. They document and are checked by the conformance tests; serialisation stays exact
 * (`app.ts`), so a schema never drops or rounds a field.
 */
import { Type, type TSchema } from 'typebox';

/** `{"data": T}` — the usual envelope. */
export const Data = <T extends TSchema>(data: T, description?: string) =>
  Type.Object({ data }, description ? { description } : {});

/** `{"data": null}` — the answer of an operation with nothing to return. */
export const DataNull = Type.Object({ data: Type.Null() }, { description: 'Done; nothing to return' });

/** The error body of every non-2xx answer (reference README "Error bodies"). */
export const ErrorBody = Type.Object({ error: Type.String() }, { description: 'What went wrong, in words' });

/** A 64-bit unsigned value: a bare JSON integer, exact beyond 2^53 (reference README "64-bit numbers"). */
export const U64 = (description?: string) =>
  // typed `number | bigint`: handlers answer exact u64 values as bigint (the serializer writes them bare)
  Type.Unsafe<number | bigint>(Type.Integer({ minimum: 0, ...(description ? { description } : {}) }));

/** 32 bytes as 64 lowercase hex characters (ids on the wire; base58 is accepted on input only). */
export const Hex32 = (description?: string) => Type.String({ pattern: '^[0-9a-f]{64}$', ...(description ? { description } : {}) });

/** A non-JSON body, e.g. `text/event-stream` or Prometheus text. */
export const Text = (contentType: string, description: string) => ({
  description,
  content: { [contentType]: { schema: Type.String() } },
});

/** The usual error statuses a guarded route answers, all with {@link ErrorBody}. */
export const Errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, ErrorBody]));

/**
 * No payload (the spec's "none", or a 204): an empty body sent without a content type. Documented
 * as a zero-length string so the document still gives the answer a schema; the conformance checker
 * accepts an empty, untyped answer for it (test/helpers/conformance.ts).
 */
export const Empty = (description = 'No payload: an empty body') => ({
  description,
  content: { 'text/plain': { schema: Type.String({ maxLength: 0 }) } },
});
