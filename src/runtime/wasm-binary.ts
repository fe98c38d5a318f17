/**
 * A small reader and patcher for the WebAssembly binary format (core spec §5), enough for what the
 * host must know before it runs a guest (runtime.md §2, §3): each import's module, name, kind and
 * function type, each exported function's type, and the memory section, which the host rewrites so
 * that V8 itself refuses growth past the runtime's page limit. It also appends custom sections
 * (`calimero_abi_v1`, runtime.md §4) and reads them back. Browser-safe: no `node:` imports.
 */

export type ValType = 'i32' | 'i64' | 'f32' | 'f64' | 'v128' | 'ref';
export interface FuncType {
  params: ValType[];
  results: ValType[];
}
export interface ImportEntry {
  module: string;
  name: string;
  kind: 'function' | 'table' | 'memory' | 'global' | 'tag';
  /** for functions */
  type?: FuncType;
}
export interface ExportEntry {
  name: string;
  kind: 'function' | 'table' | 'memory' | 'global' | 'tag';
  /** for functions: the type of the exported function */
  type?: FuncType;
}
export interface ModuleInfo {
  imports: ImportEntry[];
  exports: ExportEntry[];
  /** the module's own memory (absent when it defines none) */
  memory?: { min: number; max?: number; memory64: boolean; shared: boolean };
}

export class WasmFormatError extends Error {
  override name = 'WasmFormatError';
}

const MAGIC = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
const KINDS = ['function', 'table', 'memory', 'global', 'tag'] as const;
const VALTYPES: Record<number, ValType> = { 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64', 0x7b: 'v128', 0x70: 'ref', 0x6f: 'ref' };

export class Reader {
  constructor(
    readonly bytes: Uint8Array,
    public pos: number,
    readonly end: number,
  ) {}
  byte(): number {
    if (this.pos >= this.end) throw new WasmFormatError('unexpected end of section');
    return this.bytes[this.pos++];
  }
  u32(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 63) throw new WasmFormatError('LEB128 integer too long');
    }
  }
  name(): string {
    const len = this.u32();
    if (this.pos + len > this.end) throw new WasmFormatError('name runs past its section');
    const s = new TextDecoder('utf-8', { fatal: true }).decode(this.bytes.subarray(this.pos, this.pos + len));
    this.pos += len;
    return s;
  }
  limits(): { min: number; max?: number; memory64: boolean; shared: boolean } {
    const flags = this.byte();
    const min = this.u32();
    const max = flags & 0x01 ? this.u32() : undefined;
    return { min, max, memory64: (flags & 0x04) !== 0, shared: (flags & 0x02) !== 0 };
  }
  valtype(): ValType {
    const b = this.byte();
    const t = VALTYPES[b];
    if (!t) throw new WasmFormatError(`unsupported value type 0x${b.toString(16)}`);
    return t;
  }
}

export interface Section {
  id: number;
  /** start of the payload */
  start: number;
  end: number;
  /** start of the section header (id byte) */
  headerStart: number;
}

export function sections(bytes: Uint8Array): Section[] {
  if (bytes.length < 8 || MAGIC.some((b, i) => bytes[i] !== b)) {
    throw new WasmFormatError('not a WebAssembly module (bad magic number or version)');
  }
  const out: Section[] = [];
  const r = new Reader(bytes, 8, bytes.length);
  while (r.pos < bytes.length) {
    const headerStart = r.pos;
    const id = r.byte();
    const size = r.u32();
    const start = r.pos;
    const end = start + size;
    if (end > bytes.length) throw new WasmFormatError(`section ${id} runs past the end of the module`);
    out.push({ id, start, end, headerStart });
    r.pos = end;
  }
  return out;
}

/** Reads imports, exports (with function types) and the defined memory of a module. */
export function inspectModule(bytes: Uint8Array): ModuleInfo {
  const types: FuncType[] = [];
  const funcTypeIdx: number[] = []; // by function index (imports first)
  const imports: ImportEntry[] = [];
  const rawExports: Array<{ name: string; kind: number; index: number }> = [];
  let memory: ModuleInfo['memory'];
  for (const s of sections(bytes)) {
    const r = new Reader(bytes, s.start, s.end);
    if (s.id === 1) {
      for (let n = r.u32(); n > 0; n--) {
        const form = r.byte();
        if (form !== 0x60) throw new WasmFormatError(`unsupported type form 0x${form.toString(16)}`);
        const params: ValType[] = [];
        for (let p = r.u32(); p > 0; p--) params.push(r.valtype());
        const results: ValType[] = [];
        for (let q = r.u32(); q > 0; q--) results.push(r.valtype());
        types.push({ params, results });
      }
    } else if (s.id === 2) {
      for (let n = r.u32(); n > 0; n--) {
        const module = r.name();
        const name = r.name();
        const kind = r.byte();
        const entry: ImportEntry = { module, name, kind: KINDS[kind] ?? 'tag' };
        if (kind === 0) {
          const idx = r.u32();
          entry.type = types[idx];
          funcTypeIdx.push(idx);
        } else if (kind === 1) {
          r.valtype();
          r.limits();
        } else if (kind === 2) {
          r.limits();
        } else if (kind === 3) {
          r.valtype();
          r.byte();
        } else if (kind === 4) {
          r.byte();
          r.u32();
        } else throw new WasmFormatError(`unknown import kind ${kind}`);
        imports.push(entry);
      }
    } else if (s.id === 3) {
      for (let n = r.u32(); n > 0; n--) funcTypeIdx.push(r.u32());
    } else if (s.id === 5) {
      const n = r.u32();
      if (n > 0) memory = r.limits();
    } else if (s.id === 7) {
      for (let n = r.u32(); n > 0; n--) {
        const name = r.name();
        const kind = r.byte();
        rawExports.push({ name, kind, index: r.u32() });
      }
    }
  }
  const exports = rawExports.map(({ name, kind, index }): ExportEntry => {
    const e: ExportEntry = { name, kind: KINDS[kind] ?? 'tag' };
    if (kind === 0) e.type = types[funcTypeIdx[index]];
    return e;
  });
  return { imports, exports, memory };
}

export function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Rewrites the memory section so the module's memory declares `max <= maxPages`: V8 then fails a
 * `memory.grow` past the limit (it returns -1, as the reference's capped memory does) instead of
 * letting the guest take the process's memory. Returns the bytes unchanged when already capped.
 */
export function capMemory(bytes: Uint8Array, maxPages: number): Uint8Array {
  for (const s of sections(bytes)) {
    if (s.id !== 5) continue;
    const r = new Reader(bytes, s.start, s.end);
    const n = r.u32();
    if (n === 0) return bytes;
    const lim = r.limits();
    if (lim.memory64) throw new WasmFormatError('64-bit memories are not supported');
    if (lim.max !== undefined && lim.max <= maxPages) return bytes;
    const flags = 0x01 | (lim.shared ? 0x02 : 0);
    const first = [...leb(n), flags, ...leb(lim.min), ...leb(Math.max(lim.min, maxPages))];
    const payload = concat([Uint8Array.from(first), bytes.subarray(r.pos, s.end)]);
    return concat([
      bytes.subarray(0, s.headerStart),
      Uint8Array.from([5, ...leb(payload.length)]),
      payload,
      bytes.subarray(s.end),
    ]);
  }
  return bytes;
}

/** Appends a custom section (id 0) named `name` holding `payload`. */
export function appendCustomSection(bytes: Uint8Array, name: string, payload: Uint8Array): Uint8Array {
  sections(bytes); // validates the header
  const nameBytes = new TextEncoder().encode(name);
  const body = concat([Uint8Array.from(leb(nameBytes.length)), nameBytes, payload]);
  return concat([bytes, Uint8Array.from([0, ...leb(body.length)]), body]);
}

/** The payload of the first custom section named `name`, or undefined. */
export function readCustomSection(bytes: Uint8Array, name: string): Uint8Array | undefined {
  for (const s of sections(bytes)) {
    if (s.id !== 0) continue;
    const r = new Reader(bytes, s.start, s.end);
    if (r.name() === name) return bytes.subarray(r.pos, s.end);
  }
  return undefined;
}

/**
 * What a module's instance holds besides its memory, exported so the host can read and reset it
 * (instance reuse, instances.ts): the names given to its mutable globals and its tables.
 */
export interface InstanceStatePlan {
  globals: string[];
  tables: string[];
  /** the exported global holding the memory size the guest sees, in pages (wasm-code.ts `virtualizeMemory`) */
  memoryPages?: string;
  /** the exported globals bounding the bytes a call wrote (wasm-code.ts `VirtualMemory.dirty`): only those are put back */
  dirty?: { lo: string; hi: string };
}

/** Skips a constant expression (global initialisers); false when it holds an opcode this reader does not know. */
export function skipConstExpr(r: Reader): boolean {
  for (;;) {
    const op = r.byte();
    if (op === 0x0b) return true;
    if (op === 0x41 || op === 0x42) {
      while (r.byte() & 0x80) {
        // a signed LEB128 immediate
      }
    } else if (op === 0x43) r.pos += 4;
    else if (op === 0x44) r.pos += 8;
    else if (op === 0x23 || op === 0xd2) r.u32();
    else if (op === 0xd0) r.byte();
    else if (![0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e].includes(op)) return false;
  }
}

/** Skips one element segment; false for a passive one (its dropped flag is instance state) or an unknown layout. */
function skipElementSegment(r: Reader): boolean {
  const flags = r.u32();
  if (flags > 7 || flags === 1 || flags === 5) return false;
  const exprs = (flags & 0x04) !== 0;
  if (flags === 2 || flags === 6) r.u32(); // table index
  if ((flags & 0x01) === 0 && !skipConstExpr(r)) return false; // active: the offset
  if (flags & 0x03) r.byte(); // elemkind or reftype
  for (let n = r.u32(); n > 0; n--) {
    if (exprs) {
      if (!skipConstExpr(r)) return false;
    } else r.u32();
  }
  return true;
}

/**
 * Exports every mutable global and every table of a module under fresh names, so that an instance
 * can be put back into the state instantiation left it in. Answers null when the module holds
 * state the host could not put back, so its instances must not be reused: passive data or element
 * segments (their "dropped" flag), imports other than functions, or anything this reader does not
 * understand. (A start function is the pool's business: it may be run once only when it calls no
 * host function, instances.ts.)
 */
export function exposeInstanceState(bytes: Uint8Array): { bytes: Uint8Array; plan: InstanceStatePlan } | null {
  let globals = 0;
  const mutable: number[] = [];
  let tables = 0;
  let exportSection: Section | undefined;
  const taken = new Set<string>();
  try {
    for (const s of sections(bytes)) {
      const r = new Reader(bytes, s.start, s.end);
      if (s.id === 2) {
        for (let n = r.u32(); n > 0; n--) {
          r.name();
          r.name();
          if (r.byte() !== 0) return null; // only function imports keep the index spaces simple
          r.u32();
        }
      } else if (s.id === 4) {
        tables = r.u32();
      } else if (s.id === 6) {
        for (let n = r.u32(); n > 0; n--, globals++) {
          r.valtype();
          if (r.byte() === 1) mutable.push(globals);
          if (!skipConstExpr(r)) return null;
        }
      } else if (s.id === 7) {
        exportSection = s;
        for (let n = r.u32(); n > 0; n--) {
          taken.add(r.name());
          r.byte();
          r.u32();
        }
      } else if (s.id === 9) {
        for (let n = r.u32(); n > 0; n--) if (!skipElementSegment(r)) return null;
      } else if (s.id === 11) {
        for (let n = r.u32(); n > 0; n--) {
          const flags = r.u32();
          if (flags !== 0 && flags !== 2) return null; // passive (its dropped flag is instance state) or unknown
          if (flags === 2) r.u32();
          if (!skipConstExpr(r)) return null;
          const size = r.u32();
          r.pos += size;
        }
      }
    }
  } catch (e) {
    if (e instanceof WasmFormatError) return null;
    throw e;
  }
  return reuseWith();

  function reuseWith(): { bytes: Uint8Array; plan: InstanceStatePlan } | null {
    if (!exportSection) return null;
    let prefix = '__hearth_state_';
    while ([...taken].some((n) => n.startsWith(prefix))) prefix = `_${prefix}`;
    const plan: InstanceStatePlan = { globals: mutable.map((i) => `${prefix}g${i}`), tables: Array.from({ length: tables }, (_, i) => `${prefix}t${i}`) };
    const added: number[] = [];
    const entry = (name: string, kind: number, index: number) => {
      const b = new TextEncoder().encode(name);
      added.push(...leb(b.length), ...b, kind, ...leb(index));
    };
    mutable.forEach((g, i) => entry(plan.globals[i]!, 3, g));
    plan.tables.forEach((name, i) => entry(name, 1, i));
    const r = new Reader(bytes, exportSection.start, exportSection.end);
    const count = r.u32();
    const payload = concat([Uint8Array.from(leb(count + mutable.length + tables)), bytes.subarray(r.pos, exportSection.end), Uint8Array.from(added)]);
    return {
      bytes: concat([bytes.subarray(0, exportSection.headerStart), Uint8Array.from([7, ...leb(payload.length)]), payload, bytes.subarray(exportSection.end)]),
      plan,
    };
  }
}
