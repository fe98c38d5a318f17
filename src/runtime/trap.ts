/**
 * Why a guest call stopped, with the reference's display texts (core `crates/runtime/src/errors.rs`;
 * runtime.md §3 "How results are reported"). Host functions throw {@link Trap}; the executor turns
 * it (or a V8 trap) into a `CallFailure` with the contract's `kind`.
 */
import type { FailureKind } from './call-types.ts';

export class Trap extends Error {
  override name = 'Trap';
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
  }
}

export const hostError = (message: string) => new Trap('HostError', message);

/** The reference's `HostError` display texts. */
export const HostErrors = {
  invalidRegisterId: (id: bigint) => hostError(`invalid register id: ${id}`),
  invalidMemoryAccess: () => hostError('invalid memory access'),
  badUtf8: () => hostError('invalid UTF-8 string'),
  integerOverflow: () => hostError('integer overflow'),
  keyLengthOverflow: () => hostError('key length overflow'),
  valueLengthOverflow: () => hostError('value length overflow'),
  writeCountExceeded: (max: number) => hostError(`storage write count budget exceeded (max: ${max})`),
  writeBytesExceeded: (attempted: number, max: number) =>
    hostError(`storage write byte budget exceeded (attempted: ${attempted}, max: ${max})`),
  returnValueTooLarge: (size: number, max: number) => hostError(`return value too large (size: ${size}, max: ${max})`),
  handlerTooLarge: (size: number, max: number) => hostError(`event handler name too large (size: ${size}, max: ${max})`),
  logLengthOverflow: () => hostError('log size overflow'),
  logsOverflow: () => hostError('logs overflow'),
  eventsOverflow: () => hostError('events overflow'),
  eventKindSizeOverflow: () => hostError('event kind size overflow'),
  eventDataSizeOverflow: () => hostError('event data size overflow'),
  xcallsOverflow: () => hostError('xcalls overflow'),
  xcallFunctionSizeOverflow: () => hostError('xcall function size overflow'),
  xcallParamsSizeOverflow: () => hostError('xcall params size overflow'),
  artifactTooLarge: (size: number, max: number) => hostError(`commit artifact size overflow (size: ${size}, max: ${max})`),
  blobsNotSupported: () => hostError('blob operations not supported (NodeClient not available)'),
  invalidBlobHandle: () => hostError('invalid blob handle'),
  tooManyBlobHandles: (max: number) => hostError(`too many blob handles (max: ${max})`),
  blobBufferTooLarge: (size: number, max: number) => hostError(`blob buffer too large (size: ${size}, max: ${max})`),
  blobWriteTooLarge: (size: number, max: number) => hostError(`blob write too large (size: ${size}, max: ${max})`),
  totalBlobMemoryExceeded: (current: number, max: number) =>
    hostError(`total blob memory exceeded (current: ${current}, max: ${max})`),
  blobContextMismatch: () => hostError('context does not have permission to access this blob handle'),
  ed25519IncorrectPublicKey: () => hostError('incorrect ed25519 public key'),
  teeOnly: (fn: string) => hostError(`${fn} is only available in a TEE-triggered execution`),
  searchUnavailable: () => hostError('search_query is only available in a view (#[app::view]) on a node with search'),
  // not in the reference's catalogue: hearth's texts for the two rules it enforces at this point
  commitTwice: () => hostError('commit called more than once'),
  commitInView: () => hostError('commit refused: the method is read-only (a view cannot change state)'),
};

export function panicMessage(context: 'guest' | 'host', message: string, location?: { file: string; line: number; column: number }) {
  const at = location ? ` at ${location.file}:${location.line}:${location.column}` : '';
  return new Trap('Panic', `${context} panicked: ${message}${at}`);
}

/** `the method call returned an error: [123, 34, …]` — Rust's Debug print of the error bytes. */
export function appErrorMessage(bytes: Uint8Array): string {
  return `the method call returned an error: [${Array.from(bytes).join(', ')}]`;
}

/** V8's trap messages mapped onto the reference's `WasmTrap` display texts. */
export function wasmTrapMessage(err: Error): string {
  const m = err.message;
  if (/unreachable/i.test(m)) return 'unreachable code reached';
  if (/memory access out of bounds|out of bounds memory/i.test(m)) return 'memory out of bounds';
  if (/table index is out of bounds|table access/i.test(m)) return 'memory out of bounds';
  if (/divide by zero|remainder by zero|integer overflow|float unrepresentable|invalid conversion/i.test(m)) {
    return 'illegal arithmetic operation';
  }
  if (/null function|uninitialized element/i.test(m)) return 'indirect call to null';
  if (/signature mismatch|function signature/i.test(m)) return 'bad signature';
  if (err instanceof RangeError && /call stack/i.test(m)) return 'stack overflow';
  if (/unaligned/i.test(m)) return 'unaligned atomic operation';
  return 'indeterminate trap';
}
