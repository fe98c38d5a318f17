/**
 * What the CLI reads from an application's ABI (`wasm-abi/1`, GET /admin-api/applications/{id}/abi;
 * runtime.md §4; issue #34 §2): its methods as name, arguments, return type and read or write, for
 * `hearth app methods` and for the hints `hearth call` adds to an unknown method or a bad argument.
 *
 * Read or write follows the node's rule (runtime.md "Read-only method"): a method is read-only only
 * when its entry says `"intent": "read_only"`; no intent is a write, whatever the name suggests.
 */

export interface MethodInfo {
  name: string;
  /** `name: type` per parameter (`?` after the type when nullable) */
  args: { name: string; type: string }[];
  /** the return type, null for none */
  returns: string | null;
  access: 'read' | 'write';
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A type as one short expression: `string`, `list<u64>`, `map<string, string>`, `KeyValue`, `bytes[32]`. */
export function typeText(type: unknown, depth = 0): string {
  if (!isObject(type) || depth > 6) return '?';
  if (typeof type.$ref === 'string') return type.$ref;
  const kind = typeof type.kind === 'string' ? type.kind : '?';
  switch (kind) {
    case 'list':
      return `list<${typeText(type.items, depth + 1)}>`;
    case 'map':
      return `map<${typeText(type.key, depth + 1)}, ${typeText(type.value, depth + 1)}>`;
    case 'bytes':
      return typeof type.size === 'number' ? `bytes[${type.size}]` : 'bytes';
    case 'record':
      return `{${(Array.isArray(type.fields) ? type.fields : []).map((f: Json) => `${String(f?.name)}: ${typeText(f?.type, depth + 1)}`).join(', ')}}`;
    case 'variant':
      return (Array.isArray(type.variants) ? type.variants : []).map((v: Json) => String(v?.name)).join(' | ') || 'variant';
    default:
      return kind;
  }
}

/** The methods an ABI declares, in its order; [] for no ABI or one without methods. */
export function abiMethods(abi: unknown): MethodInfo[] {
  if (!isObject(abi) || !Array.isArray(abi.methods)) return [];
  return abi.methods.filter((m): m is Json => isObject(m) && typeof m.name === 'string').map((m) => ({
    name: m.name as string,
    args: (Array.isArray(m.params) ? m.params : []).filter(isObject).map((p) => ({
      name: String(p.name),
      type: `${typeText(p.type)}${p.nullable === true ? '?' : ''}`,
    })),
    returns: m.returns === undefined || m.returns === null ? null : `${typeText(m.returns)}${m.returns_nullable === true ? '?' : ''}`,
    access: m.intent === 'read_only' ? 'read' : 'write',
  }));
}

/** `{"key": string, "value": string}`: the arguments a method takes, as `--args` carries them. */
export function argsText(m: MethodInfo): string {
  return m.args.length ? `{${m.args.map((a) => `"${a.name}": ${a.type}`).join(', ')}}` : '{}';
}

/** The one-line hint for a method the application does not declare. */
export function unknownMethodHint(method: string, methods: MethodInfo[]): string {
  const callable = methods.filter((m) => m.name !== 'init').map((m) => m.name);
  return `the application has no method ${JSON.stringify(method)}; its methods: ${callable.join(', ') || '(none)'}`;
}

/** Node messages that say the arguments did not fit the method (serde's wording in the reference and ours). */
export const ARGUMENT_SHAPE = /missing field|unknown field|invalid type|invalid value|invalid length|expected .*(?:string|map|struct|sequence|integer)|deserializ|failed to parse|not valid JSON/i;
