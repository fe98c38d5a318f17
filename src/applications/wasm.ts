/**
 * WebAssembly binary helpers (runtime.md §4; core `crates/wasm-abi/src/embed.rs`): find a custom
 * section by name, append one, and read the embedded `calimero_abi_v1` ABI. Only the section
 * framing is parsed (magic, version, id + LEB128 size), never the code.
 */
import { badRequest } from '../errors.ts';
import { appendCustomSection as appendSection } from '../runtime/wasm-binary.ts';
import { ABI_SCHEMA_VERSION, ABI_SECTION } from './constants.ts';

const MAGIC = [0x00, 0x61, 0x73, 0x6d];
const VERSION_1 = [0x01, 0x00, 0x00, 0x00];

export function isWasmModule(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && MAGIC.every((b, i) => bytes[i] === b) && VERSION_1.every((b, i) => bytes[4 + i] === b);
}

function readLeb(bytes: Uint8Array, at: number): [value: number, next: number] {
  let value = 0;
  let shift = 0;
  for (let i = at; i < bytes.length && i < at + 5; i++) {
    value += (bytes[i] & 0x7f) * 2 ** shift;
    shift += 7;
    if ((bytes[i] & 0x80) === 0) return [value, i + 1];
  }
  throw badRequest('malformed WebAssembly module: bad LEB128 length');
}

/** The payload of the first custom section called `name`, or undefined. */
export function customSection(bytes: Uint8Array, name: string): Uint8Array | undefined {
  if (!isWasmModule(bytes)) throw badRequest('not a WebAssembly module (bad magic or version)');
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at];
    const [size, body] = readLeb(bytes, at + 1);
    const end = body + size;
    if (end > bytes.length) throw badRequest('malformed WebAssembly module: a section runs past the end');
    if (id === 0) {
      const [nameLen, nameAt] = readLeb(bytes, body);
      if (nameAt + nameLen > end) throw badRequest('malformed WebAssembly module: bad custom section name');
      const sectionName = Buffer.from(bytes.subarray(nameAt, nameAt + nameLen)).toString('utf8');
      if (sectionName === name) return bytes.subarray(nameAt + nameLen, end);
    }
    at = end;
  }
  return undefined;
}

/** The module with a custom section `name` appended (custom sections may appear anywhere). */
export function appendCustomSection(bytes: Uint8Array, name: string, payload: Uint8Array): Uint8Array {
  if (!isWasmModule(bytes)) throw badRequest('not a WebAssembly module (bad magic or version)');
  return appendSection(bytes, name, payload);
}

/**
 * The ABI embedded in a wasm: its `calimero_abi_v1` JSON, or null when the module carries none.
 * A section that is not a `wasm-abi/1` JSON object is a 400 (the reference's behaviour).
 */
export function embeddedAbi(wasm: Uint8Array): Record<string, unknown> | null {
  const section = customSection(wasm, ABI_SECTION);
  if (!section) return null;
  let abi: unknown;
  try {
    abi = JSON.parse(Buffer.from(section).toString('utf8'));
  } catch (err) {
    throw badRequest(`application has no usable embedded ABI: the ${ABI_SECTION} section is not JSON (${(err as Error).message})`);
  }
  if (typeof abi !== 'object' || abi === null || Array.isArray(abi)) {
    throw badRequest(`application has no usable embedded ABI: the ${ABI_SECTION} section is not a JSON object`);
  }
  const version = (abi as Record<string, unknown>).schema_version;
  if (version !== ABI_SCHEMA_VERSION) {
    throw badRequest(`unsupported ABI schema version ${JSON.stringify(version)}: expected "${ABI_SCHEMA_VERSION}"`);
  }
  return abi as Record<string, unknown>;
}

/** Method names an ABI marks read-only (`"intent": "read_only"`). */
export function readOnlyMethodsOf(abi: Record<string, unknown> | null): Set<string> {
  const out = new Set<string>();
  const methods = abi?.methods;
  if (!Array.isArray(methods)) return out;
  for (const m of methods) {
    if (m && typeof m === 'object' && (m as Record<string, unknown>).intent === 'read_only') {
      const name = (m as Record<string, unknown>).name;
      if (typeof name === 'string') out.add(name);
    }
  }
  return out;
}
