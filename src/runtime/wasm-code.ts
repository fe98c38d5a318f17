/**
 * A virtual memory size for instance reuse (issue #22, instances.ts; docs/runtime.md "Instance
 * reuse"): a linear memory cannot shrink, yet a guest built by the reference SDK grows its memory
 * in every call (its allocator takes its heap with `memory.grow`). So that one instance can serve
 * every call exactly as a fresh one would, the module is rewritten before it is compiled:
 *
 * - a new mutable i32 global holds the number of pages the guest sees, initialised to the
 *   memory's initial size, and exported under a name the module does not use;
 * - every `memory.size` reads that global instead;
 * - every `memory.grow n` calls a new function that answers as `memory.grow` would on a memory of
 *   that size: -1 past 65536 pages or when the real memory cannot grow that far (its maximum is
 *   the runtime's page limit, compile.ts), else the old size, growing the real memory only when the
 *   new size passes it.
 *
 * Putting an instance back is then: the memory's first bytes from the snapshot, zeros past them
 * (a fresh instance's grown pages are zero), and the globals (the size among them).
 *
 * To find those instructions every function body is decoded instruction by instruction (core spec
 * §5.4); the walk also tells whether any instruction can change a table (`table.set`, `table.grow`,
 * `table.fill`, `table.copy`, `table.init`): when none can, tables need no restoring. A module with
 * an instruction this decoder does not know, or touching a memory other than the first, is left
 * as it is (null): its instances are reused only while their memory keeps its size.
 * Browser-safe: no `node:` imports.
 */
import { Reader, WasmFormatError, concat, leb, sections, type Section } from './wasm-binary.ts';

export interface VirtualMemory {
  bytes: Uint8Array;
  /** the export name of the global holding the size the guest sees, in pages */
  pagesExport: string;
  /** false when no instruction of the module can change a table */
  tablesMutable: boolean;
}

class Unsupported extends Error {}

const MAX_PAGES = 65536;

/** the size of one block type immediate (0x40, a value type, or an s33 type index) */
function skipBlockType(r: Reader): void {
  const b = r.bytes[r.pos];
  if (b === 0x40 || (b >= 0x7b && b <= 0x7f) || b === 0x70 || b === 0x6f) {
    r.pos++;
    return;
  }
  skipSigned(r);
}

function skipSigned(r: Reader): void {
  while (r.byte() & 0x80) {
    // a signed LEB128 immediate
  }
}

function memarg(r: Reader): void {
  const align = r.u32();
  if (align & 0x40) throw new Unsupported('a memory other than the first');
  r.u32();
}

function memIndexZero(r: Reader): void {
  if (r.u32() !== 0) throw new Unsupported('a memory other than the first');
}

/** SIMD (0xFD) sub-opcodes by their immediates */
function skipSimd(r: Reader, op: number): void {
  if (op <= 11 || op === 92 || op === 93) memarg(r);
  else if (op === 12 || op === 13) r.pos += 16;
  else if (op >= 21 && op <= 34) r.pos += 1;
  else if (op >= 84 && op <= 91) {
    memarg(r);
    r.pos += 1;
  } else if (op > 0x113) throw new Unsupported(`SIMD opcode ${op}`);
}

interface Walk {
  /** the body with its `memory.size` / `memory.grow` replaced */
  out: number[];
  tableWrite: boolean;
}

/** Rewrites one function body's expression (after its locals), from `r.pos` to `end`. */
function rewriteBody(r: Reader, end: number, pagesGlobal: number, growFunc: number, walk: Walk): void {
  let copiedTo = r.pos;
  const flush = (upTo: number) => {
    for (let i = copiedTo; i < upTo; i++) walk.out.push(r.bytes[i]);
  };
  while (r.pos < end) {
    const start = r.pos;
    const op = r.byte();
    switch (true) {
      case op === 0x3f || op === 0x40: {
        memIndexZero(r);
        flush(start);
        if (op === 0x3f) walk.out.push(0x23, ...leb(pagesGlobal));
        else walk.out.push(0x10, ...leb(growFunc));
        copiedTo = r.pos;
        break;
      }
      case op <= 0x01 || op === 0x05 || op === 0x0b || op === 0x0f || op === 0x1a || op === 0x1b || op === 0x19 || op === 0xd1:
        break;
      case op === 0x02 || op === 0x03 || op === 0x04 || op === 0x06:
        skipBlockType(r);
        break;
      case op === 0x07 || op === 0x08 || op === 0x09 || op === 0x18 || op === 0x0c || op === 0x0d || op === 0x10 || op === 0x12 || op === 0xd2:
        r.u32();
        break;
      case op === 0x0e:
        for (let n = r.u32(); n >= 0; n--) r.u32();
        break;
      case op === 0x11 || op === 0x13:
        r.u32();
        r.u32();
        break;
      case op === 0x1c: {
        for (let n = r.u32(); n > 0; n--) {
          const t = r.byte();
          if (t === 0x63 || t === 0x64) throw new Unsupported('typed references');
        }
        break;
      }
      case op >= 0x20 && op <= 0x25:
        r.u32();
        break;
      case op === 0x26:
        r.u32();
        walk.tableWrite = true;
        break;
      case op >= 0x28 && op <= 0x3e:
        memarg(r);
        break;
      case op === 0x41 || op === 0x42:
        skipSigned(r);
        break;
      case op === 0x43:
        r.pos += 4;
        break;
      case op === 0x44:
        r.pos += 8;
        break;
      case op >= 0x45 && op <= 0xc4:
        break;
      case op === 0xd0: {
        const b = r.bytes[r.pos];
        if (b === 0x70 || b === 0x6f) r.pos++;
        else skipSigned(r);
        break;
      }
      case op === 0xfc: {
        const sub = r.u32();
        if (sub <= 7) break;
        if (sub === 8) {
          r.u32();
          memIndexZero(r);
        } else if (sub === 9 || sub === 13 || sub === 16) r.u32();
        else if (sub === 10) {
          memIndexZero(r);
          memIndexZero(r);
        } else if (sub === 11) memIndexZero(r);
        else if (sub === 12 || sub === 14) {
          r.u32();
          r.u32();
          walk.tableWrite = true;
        } else if (sub === 15 || sub === 17) {
          r.u32();
          walk.tableWrite = true;
        } else throw new Unsupported(`0xFC ${sub}`);
        break;
      }
      case op === 0xfd:
        skipSimd(r, r.u32());
        break;
      case op === 0xfe: {
        const sub = r.u32();
        if (sub === 0x03) r.pos += 1;
        else memarg(r);
        break;
      }
      default:
        throw new Unsupported(`opcode 0x${op.toString(16)}`);
    }
    if (r.pos > end) throw new WasmFormatError('an instruction runs past its function body');
  }
  flush(end);
}

/** `memory.grow` on the virtual size: (param $n i32) (result i32) (local $old i32) (local $new i32) */
function growBody(pagesGlobal: number): number[] {
  const g = leb(pagesGlobal);
  // prettier-ignore
  const code = [
    0x01, 0x02, 0x7f, // two i32 locals: 1 = old, 2 = new
    0x23, ...g, 0x22, 0x01, 0xad, 0x20, 0x00, 0xad, 0x7c, // i64(old = size) + i64(n)
    0x42, 0x80, 0x80, 0x04, 0x56, 0x04, 0x40, 0x41, 0x7f, 0x0f, 0x0b, // > 65536 pages: -1
    0x20, 0x01, 0x20, 0x00, 0x6a, 0x22, 0x02, // new = old + n
    0x3f, 0x00, 0x4b, 0x04, 0x40, // new > real size:
    0x20, 0x02, 0x3f, 0x00, 0x6b, 0x40, 0x00, 0x41, 0x7f, 0x46, // the real memory grows by the difference
    0x04, 0x40, 0x41, 0x7f, 0x0f, 0x0b, // or the grow fails: -1
    0x0b,
    0x20, 0x02, 0x24, ...g, 0x20, 0x01, 0x0b, // size = new; answer old
  ];
  return [...leb(code.length), ...code];
}

/** vec(items) with `extra` appended: the count rewritten, the old items kept as bytes */
function extendVec(bytes: Uint8Array, s: Section, extra: number[], added: number): Uint8Array {
  const r = new Reader(bytes, s.start, s.end);
  const count = r.u32();
  return Uint8Array.from([...leb(count + added), ...bytes.subarray(r.pos, s.end), ...extra]);
}

function section(id: number, payload: Uint8Array): Uint8Array {
  return concat([Uint8Array.from([id, ...leb(payload.length)]), payload]);
}

/** where a section goes in the module's order (custom sections aside) */
const ORDER: Record<number, number> = { 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13 };

/**
 * Rewrites the module so the memory size the guest sees is a global the host can put back (see
 * the file header); null when the module is not one this can do for.
 */
export function virtualizeMemory(bytes: Uint8Array): VirtualMemory | null {
  try {
    return rewrite(bytes);
  } catch (e) {
    if (e instanceof Unsupported || e instanceof WasmFormatError) return null;
    throw e;
  }
}

function rewrite(bytes: Uint8Array): VirtualMemory | null {
  const all = sections(bytes);
  const byId = new Map<number, Section>();
  for (const s of all) if (s.id !== 0) byId.set(s.id, s);
  const types = byId.get(1);
  const funcs = byId.get(3);
  const mem = byId.get(5);
  const exps = byId.get(7);
  const code = byId.get(10);
  if (!types || !funcs || !mem || !exps || !code) return null;

  let funcImports = 0;
  const imp = byId.get(2);
  if (imp) {
    const r = new Reader(bytes, imp.start, imp.end);
    for (let n = r.u32(); n > 0; n--) {
      r.name();
      r.name();
      if (r.byte() !== 0) return null; // only function imports keep the index spaces simple
      r.u32();
      funcImports++;
    }
  }
  const mr = new Reader(bytes, mem.start, mem.end);
  if (mr.u32() !== 1) return null;
  const limits = mr.limits();
  if (limits.memory64 || limits.shared) return null;

  const typeCount = new Reader(bytes, types.start, types.end).u32();
  const defined = new Reader(bytes, funcs.start, funcs.end).u32();
  const glob = byId.get(6);
  const globals = glob ? new Reader(bytes, glob.start, glob.end).u32() : 0;
  const taken = new Set<string>();
  const er = new Reader(bytes, exps.start, exps.end);
  for (let n = er.u32(); n > 0; n--) {
    taken.add(er.name());
    er.byte();
    er.u32();
  }
  let pagesExport = '__hearth_memory_pages';
  while (taken.has(pagesExport)) pagesExport = `_${pagesExport}`;

  const pagesGlobal = globals;
  const growFunc = funcImports + defined;
  const growType = typeCount;

  // the code section, each body rewritten, and the grow function appended
  const cr = new Reader(bytes, code.start, code.end);
  const bodies = cr.u32();
  if (bodies !== defined) throw new WasmFormatError('function and code sections disagree');
  const walk: Walk = { out: [], tableWrite: false };
  const newCode: number[] = [...leb(bodies + 1)];
  for (let i = 0; i < bodies; i++) {
    const size = cr.u32();
    const end = cr.pos + size;
    if (end > code.end) throw new WasmFormatError('a function body runs past the code section');
    const localsStart = cr.pos;
    for (let n = cr.u32(); n > 0; n--) {
      cr.u32();
      const t = cr.byte();
      if (t === 0x63 || t === 0x64) throw new Unsupported('typed references');
    }
    walk.out = Array.from(bytes.subarray(localsStart, cr.pos));
    rewriteBody(cr, end, pagesGlobal, growFunc, walk);
    newCode.push(...leb(walk.out.length), ...walk.out);
    cr.pos = end;
  }
  newCode.push(...growBody(pagesGlobal));

  const nameBytes = new TextEncoder().encode(pagesExport);
  const replaced = new Map<number, Uint8Array>([
    [1, section(1, extendVec(bytes, types, [0x60, 0x01, 0x7f, 0x01, 0x7f], 1))],
    [3, section(3, extendVec(bytes, funcs, leb(growType), 1))],
    [7, section(7, extendVec(bytes, exps, [...leb(nameBytes.length), ...nameBytes, 0x03, ...leb(pagesGlobal)], 1))],
    [10, section(10, Uint8Array.from(newCode))],
  ]);
  const globalEntry = [0x7f, 0x01, 0x41, ...signedLeb(limits.min), 0x0b];
  if (glob) replaced.set(6, section(6, extendVec(bytes, glob, globalEntry, 1)));

  const parts: Uint8Array[] = [bytes.subarray(0, 8)];
  let globalPlaced = glob !== undefined;
  for (const s of all) {
    if (!globalPlaced && s.id !== 0 && ORDER[s.id]! > ORDER[6]!) {
      parts.push(section(6, Uint8Array.from([0x01, ...globalEntry])));
      globalPlaced = true;
    }
    parts.push(replaced.get(s.id) ?? bytes.subarray(s.headerStart, s.end));
  }
  if (!globalPlaced) parts.push(section(6, Uint8Array.from([0x01, ...globalEntry])));
  if (limits.min > MAX_PAGES) return null;
  return { bytes: concat(parts), pagesExport, tablesMutable: walk.tableWrite };
}

function signedLeb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}
