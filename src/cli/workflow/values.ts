/**
 * Workflow values as merobox handles them (merobox `steps/base.py`): `{{var}}` substitution, dotted
 * output paths, and the lenient reading of JSON-like text. A string that is exactly one placeholder
 * becomes the value itself (an object stays an object); placeholders inside a longer string are
 * replaced by their text. Python spellings (`True`, `None`, single quotes) are shown and read the
 * way merobox, a Python program, shows and reads them, so a workflow's comparisons mean the same.
 */

export type Values = Record<string, unknown>;

const WHOLE = /^\{\{\s*([^{}]+?)\s*\}\}$/;
const EMBEDDED = /\{\{\s*([^{}]+?)\s*\}\}/g;

export class MissingValueError extends Error {
  override name = 'MissingValueError';
  constructor(readonly variable: string) {
    super(`{{${variable}}} has no value: no step before this one exported it`);
  }
}

/** The placeholder names a string refers to. */
export function placeholders(text: string): string[] {
  return [...text.matchAll(EMBEDDED)].map((m) => m[1]!);
}

/** Every placeholder in a value (strings at any depth). */
export function placeholdersIn(value: unknown): string[] {
  if (typeof value === 'string') return placeholders(value);
  if (Array.isArray(value)) return value.flatMap(placeholdersIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(placeholdersIn);
  return [];
}

function lookup(name: string, values: Values): unknown {
  if (!(name in values)) throw new MissingValueError(name);
  return values[name];
}

/** Substitutes placeholders in a string (a whole-string placeholder keeps the value's type). */
export function substitute(text: string, values: Values): unknown {
  const whole = WHOLE.exec(text);
  if (whole) return lookup(whole[1]!, values);
  return text.replace(EMBEDDED, (_m, name: string) => textOf(lookup(name, values)));
}

/** Substitutes placeholders at any depth of a value. */
export function substituteDeep(value: unknown, values: Values): unknown {
  if (typeof value === 'string') return substitute(value, values);
  if (Array.isArray(value)) return value.map((v) => substituteDeep(v, values));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteDeep(v, values)]));
  return value;
}

/** A value as text inside a longer string: objects as JSON, everything else as it prints. */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Python's `str()` of a value (merobox compares non-numbers as their `str()`). */
export function pyStr(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(', ')}}`;
  return String(value);
}

/** Python's `repr()`: how merobox shows an operand in a failed assertion. */
export function pyRepr(value: unknown): string {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  return pyStr(value);
}

/** Python's `float()` of a value, or undefined where it would raise. */
export function pyFloat(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value !== 'string') return undefined;
  const s = value.trim().toLowerCase();
  if (/^[+-]?(inf|infinity)$/.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/.test(s)) return NaN;
  if (!/^[+-]?(\d+(_\d+)*\.?(\d+(_\d+)*)?|\.\d+(_\d+)*)(e[+-]?\d+)?$/.test(s)) return undefined;
  return Number(s.replace(/_/g, ''));
}

/** Python-style deep equality (`1 == 1.0`, `True == 1`; dicts by keys, lists by order). */
export function pyEqual(a: unknown, b: unknown): boolean {
  const numA = typeof a === 'number' || typeof a === 'boolean';
  const numB = typeof b === 'number' || typeof b === 'boolean';
  if (numA && numB) return Number(a) === Number(b);
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => pyEqual(v, b[i]));
  if (typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => k in b && pyEqual((a as Values)[k], (b as Values)[k]));
  }
  return a === b;
}

/**
 * JSON-like text to a value (merobox `_try_parse_json`): JSON, then a Python literal (single
 * quotes, `True`/`False`/`None`), then JSON with trailing commas dropped; anything else stays text.
 */
export function parseJsonLike(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const s = value.trim();
  if (!s) return value;
  try {
    return JSON.parse(s);
  } catch {
    /* not plain JSON */
  }
  const python = pythonLiteralToJson(s);
  if (python !== undefined) {
    try {
      return JSON.parse(python);
    } catch {
      /* not a Python literal either */
    }
  }
  if (/[[{]/.test(s)) {
    try {
      return JSON.parse(s.replace(/,(\s*[}\]])/g, '$1'));
    } catch {
      /* not JSON with trailing commas */
    }
  }
  return value;
}

/** Rewrites a Python literal (quotes, True/False/None) as JSON text; undefined when it cannot. */
function pythonLiteralToJson(s: string): string | undefined {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "'" || c === '"') {
      let j = i + 1;
      let text = '';
      while (j < s.length && s[j] !== c) {
        if (s[j] === '\\' && j + 1 < s.length) {
          text += s[j + 1];
          j += 2;
        } else text += s[j++];
      }
      if (j >= s.length) return undefined;
      out += JSON.stringify(text);
      i = j;
      continue;
    }
    const word = /^(True|False|None)\b/.exec(s.slice(i));
    if (word) {
      out += { True: 'true', False: 'false', None: 'null' }[word[1] as 'True' | 'False' | 'None'];
      i += word[1]!.length - 1;
      continue;
    }
    out += c;
  }
  return out;
}

/**
 * A dotted path into a value (merobox `_extract_path`): `a.b`, `items.0.id`; JSON text met along
 * the way is parsed. Undefined when the path does not resolve.
 */
export function extractPath(value: unknown, path: string): unknown {
  let current: unknown = value;
  for (const segment of path.split('.')) {
    current = parseJsonLike(current);
    if (Array.isArray(current) && /^\d+$/.test(segment)) {
      current = current[Number(segment)];
      if (current === undefined) return undefined;
    } else if (current && typeof current === 'object' && segment in current) current = (current as Values)[segment];
    else return undefined;
  }
  return typeof current === 'string' ? parseJsonLike(current) : current;
}
