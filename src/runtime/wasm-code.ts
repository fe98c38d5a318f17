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
 * - every store and `memory.fill` / `copy` / `init` is preceded by a call to an added marker that
 *   widens a dirty range [lo, hi) held in two more exported globals (issue #33), so that a kept
 *   instance puts back only the bytes a call wrote.
 *
 * Putting an instance back is then: the dirty range's bytes from the snapshot, zeros past its end
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
  /**
   * The export names of two i32 globals bounding every byte the guest wrote since they were last
   * put back ([lo, hi) as unsigned; lo = 2^32 − 1 and hi = 0 when nothing was): absent when some
   * instruction writes memory unmarked (a SIMD or atomic store), so the whole memory is put back.
   */
  dirty?: { lo: string; hi: string };
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

/** a memory instruction's immediates; answers its offset */
function memarg(r: Reader): number {
  const align = r.u32();
  if (align & 0x40) throw new Unsupported('a memory other than the first');
  return r.u32();
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
  /** the body with its `memory.size` / `memory.grow` replaced and its memory writes marked */
  out: number[];
  tableWrite: boolean;
  /** an instruction writes memory without being marked (a SIMD or atomic store): the dirty range is not to be trusted */
  unmarked: boolean;
}

/** The functions the rewrite appends, by index: the virtual `memory.grow`, and the markers of writes. */
interface Added {
  pagesGlobal: number;
  growFunc: number;
  /** marks a store's bytes dirty, by the stored value's type (i32, i64, f32, f64) */
  markStore: Record<number, number>;
  /** marks `memory.fill` / `memory.copy` / `memory.init`'s destination dirty */
  markBulk: number;
}

/** the value type a plain store (0x36–0x3e) takes */
const STORE_TYPE: Record<number, number> = { 0x36: 0x7f, 0x37: 0x7e, 0x38: 0x7d, 0x39: 0x7c, 0x3a: 0x7f, 0x3b: 0x7f, 0x3c: 0x7e, 0x3d: 0x7e, 0x3e: 0x7e };
/** the widest store writes this many bytes: a store's mark covers them from its address (a few more at worst) */
const STORE_SPAN = 8;

/** Rewrites one function body's expression (after its locals), from `r.pos` to `end`. */
function rewriteBody(r: Reader, end: number, added: Added, walk: Walk): void {
  const { pagesGlobal, growFunc } = added;
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
      case op >= 0x28 && op <= 0x35:
        memarg(r);
        break;
      case op >= 0x36 && op <= 0x3e: {
        // [addr, value] → the marker notes [addr + offset, + 8) and hands both back, then the store as it was
        const offset = memarg(r);
        flush(start);
        walk.out.push(0x41, ...signedLeb(offset | 0), 0x10, ...leb(added.markStore[STORE_TYPE[op]!]!));
        copiedTo = start;
        break;
      }
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
        if (sub === 8 || sub === 10 || sub === 11) {
          // memory.init / copy / fill: [dest, src or value, n] → the marker notes [dest, dest + n)
          if (sub === 8) r.u32();
          memIndexZero(r);
          if (sub === 10) memIndexZero(r);
          flush(start);
          walk.out.push(0x10, ...leb(added.markBulk));
          copiedTo = start;
        } else if (sub === 9 || sub === 13 || sub === 16) r.u32();
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
      case op === 0xfd: {
        const sub = r.u32();
        if (sub === 11 || (sub >= 88 && sub <= 91)) walk.unmarked = true; // v128 stores
        skipSimd(r, sub);
        break;
      }
      case op === 0xfe: {
        const sub = r.u32();
        if (sub === 0x03) r.pos += 1;
        else memarg(r);
        if (sub >= 0x17) walk.unmarked = true; // atomic stores and read-modify-writes
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
  const fresh = (name: string) => {
    while (taken.has(name)) name = `_${name}`;
    taken.add(name);
    return name;
  };
  const pagesExport = fresh('__hearth_memory_pages');
  const dirtyExports = { lo: fresh('__hearth_dirty_lo'), hi: fresh('__hearth_dirty_hi') };

  // new globals: the size the guest sees, then the dirty range [lo, hi) (lo starts at 2^32 - 1, hi at 0)
  const pagesGlobal = globals;
  const [loGlobal, hiGlobal] = [globals + 1, globals + 2];
  // new functions (and their types, in the same order): grow, a store marker per value type, the bulk marker
  const growFunc = funcImports + defined;
  const valueTypes = [0x7f, 0x7e, 0x7d, 0x7c];
  const added: Added = { pagesGlobal, growFunc, markStore: {}, markBulk: growFunc + 1 + valueTypes.length };
  valueTypes.forEach((t, i) => (added.markStore[t] = growFunc + 1 + i));
  const newTypes: number[] = [0x60, 0x01, 0x7f, 0x01, 0x7f];
  for (const t of valueTypes) newTypes.push(0x60, 0x03, 0x7f, t, 0x7f, 0x02, 0x7f, t);
  newTypes.push(0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x03, 0x7f, 0x7f, 0x7f);
  const addedFuncs = 2 + valueTypes.length;

  // the code section, each body rewritten, and the added functions appended
  const cr = new Reader(bytes, code.start, code.end);
  const bodies = cr.u32();
  if (bodies !== defined) throw new WasmFormatError('function and code sections disagree');
  const walk: Walk = { out: [], tableWrite: false, unmarked: false };
  const newCode: number[] = [...leb(bodies + addedFuncs)];
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
    rewriteBody(cr, end, added, walk);
    newCode.push(...leb(walk.out.length), ...walk.out);
    cr.pos = end;
  }
  newCode.push(...growBody(pagesGlobal));
  for (let i = 0; i < valueTypes.length; i++) newCode.push(...markStoreBody(loGlobal, hiGlobal));
  newCode.push(...markBulkBody(loGlobal, hiGlobal));

  const exportEntry = (name: string, global: number) => {
    const b = new TextEncoder().encode(name);
    return [...leb(b.length), ...b, 0x03, ...leb(global)];
  };
  const typeIndices = Array.from({ length: addedFuncs }, (_, i) => leb(typeCount + i)).flat();
  const replaced = new Map<number, Uint8Array>([
    [1, section(1, extendVec(bytes, types, newTypes, addedFuncs))],
    [3, section(3, extendVec(bytes, funcs, typeIndices, addedFuncs))],
    [7, section(7, extendVec(bytes, exps, [...exportEntry(pagesExport, pagesGlobal), ...exportEntry(dirtyExports.lo, loGlobal), ...exportEntry(dirtyExports.hi, hiGlobal)], 3))],
    [10, section(10, Uint8Array.from(newCode))],
  ]);
  const globalEntries = [0x7f, 0x01, 0x41, ...signedLeb(limits.min), 0x0b, 0x7f, 0x01, 0x41, ...signedLeb(-1), 0x0b, 0x7f, 0x01, 0x41, 0x00, 0x0b];
  if (glob) replaced.set(6, section(6, extendVec(bytes, glob, globalEntries, 3)));

  const parts: Uint8Array[] = [bytes.subarray(0, 8)];
  let globalPlaced = glob !== undefined;
  for (const s of all) {
    if (!globalPlaced && s.id !== 0 && ORDER[s.id]! > ORDER[6]!) {
      parts.push(section(6, Uint8Array.from([0x03, ...globalEntries])));
      globalPlaced = true;
    }
    parts.push(replaced.get(s.id) ?? bytes.subarray(s.headerStart, s.end));
  }
  if (!globalPlaced) parts.push(section(6, Uint8Array.from([0x03, ...globalEntries])));
  if (limits.min > MAX_PAGES) return null;
  return { bytes: concat(parts), pagesExport, tablesMutable: walk.tableWrite, dirty: walk.unmarked ? undefined : dirtyExports };
}

/**
 * A store's marker: (param $addr i32) (param $value T) (param $offset i32) (result i32 T). Widens
 * [lo, hi) to cover [addr + offset, + 8) and hands the address and value back for the store. The
 * sum wraps only for a store that traps (its address is past any memory), which writes nothing.
 */
function markStoreBody(lo: number, hi: number): number[] {
  const [l, h] = [leb(lo), leb(hi)];
  // prettier-ignore
  const code = [
    0x00, // no locals
    0x20, 0x00, 0x20, 0x02, 0x6a, 0x21, 0x02, // offset = addr + offset
    0x20, 0x02, 0x23, ...l, 0x20, 0x02, 0x23, ...l, 0x49, 0x1b, 0x24, ...l, // lo = offset < lo ? offset : lo
    0x20, 0x02, 0x41, STORE_SPAN, 0x6a, 0x21, 0x02, // offset += 8
    0x20, 0x02, 0x23, ...h, 0x20, 0x02, 0x23, ...h, 0x4b, 0x1b, 0x24, ...h, // hi = offset > hi ? offset : hi
    0x20, 0x00, 0x20, 0x01, 0x0b,
  ];
  return [...leb(code.length), ...code];
}

/** The bulk marker: (param $dest i32) (param $x i32) (param $n i32) (result i32 i32 i32), widening [lo, hi) to [dest, dest + n). */
function markBulkBody(lo: number, hi: number): number[] {
  const [l, h] = [leb(lo), leb(hi)];
  // prettier-ignore
  const code = [
    0x01, 0x01, 0x7f, // one i32 local: 3 = end
    0x20, 0x00, 0x23, ...l, 0x20, 0x00, 0x23, ...l, 0x49, 0x1b, 0x24, ...l, // lo = dest < lo ? dest : lo
    0x20, 0x00, 0x20, 0x02, 0x6a, 0x21, 0x03, // end = dest + n (wraps only when the instruction traps, writing nothing)
    0x20, 0x03, 0x23, ...h, 0x20, 0x03, 0x23, ...h, 0x4b, 0x1b, 0x24, ...h, // hi = end > hi ? end : hi
    0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0x0b,
  ];
  return [...leb(code.length), ...code];
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
