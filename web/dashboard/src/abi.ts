/**
 * What the dashboard reads from an application's ABI (`wasm-abi/1`, GET …/abi; docs/applications.md):
 * which method the call form starts on, the argument template it fills in, which methods write,
 * and which view method lists the state's entries (the state browser). No rendering, unit-tested.
 */

export interface AbiType {
  kind?: string;
  $ref?: string;
  items?: AbiType;
  key?: AbiType;
  value?: AbiType;
  fields?: { name: string; type: AbiType; nullable?: boolean }[];
  variants?: { name: string; payload?: AbiType }[];
  size?: number;
  [k: string]: unknown;
}

export interface AbiMethod {
  name: string;
  params?: { name: string; type: AbiType; nullable?: boolean }[];
  returns?: AbiType;
  returns_nullable?: boolean;
  intent?: string;
}

export interface AbiDoc {
  types?: Record<string, AbiType>;
  methods?: AbiMethod[];
}

export const isReadOnly = (m: AbiMethod | undefined): boolean => m?.intent === 'read_only';

/** Names that say a method destroys state: such a method is never preselected, and its confirmation says so. */
const DESTRUCTIVE = /^(clear|reset|remove|delete|destroy|drop|wipe|purge|erase)(_|$)|_(all|everything)$/i;
export const isDestructive = (m: AbiMethod): boolean => !isReadOnly(m) && DESTRUCTIVE.test(m.name);

/**
 * The method the call form starts on: the first read-only one (a getter runs as a query and changes
 * nothing); without any, the first that is not destructive; never `init`, never a destructive one
 * ('' then: the person chooses).
 */
export function defaultMethod(methods: AbiMethod[]): string {
  const callable = methods.filter((m) => m.name !== 'init');
  return (callable.find(isReadOnly) ?? callable.find((m) => !isDestructive(m)))?.name ?? '';
}

/** A placeholder value of a type, as JSON would carry it (bytes as hex, u64 as a number). */
export function placeholder(type: AbiType | undefined, types: Record<string, AbiType> = {}, depth = 0): unknown {
  if (!type || depth > 8) return null;
  if (type.$ref) return placeholder(types[type.$ref], types, depth + 1);
  switch (type.kind) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'i32':
    case 'i64':
    case 'u32':
    case 'u64':
    case 'u128':
    case 'i128':
    case 'f32':
    case 'f64':
      return 0;
    case 'bytes':
      return typeof type.size === 'number' ? '00'.repeat(type.size) : '';
    case 'list':
      return [];
    case 'map':
      return {};
    case 'record':
      return Object.fromEntries((type.fields ?? []).map((f) => [f.name, f.nullable ? null : placeholder(f.type, types, depth + 1)]));
    case 'variant': {
      const first = type.variants?.[0];
      if (!first) return null;
      return first.payload ? { [first.name]: placeholder(first.payload, types, depth + 1) } : first.name;
    }
    case 'unit':
      return null;
    default:
      return null;
  }
}

/** The arguments template of a method: each parameter by name with a placeholder of its type. */
export function argumentTemplate(method: AbiMethod | undefined, types: Record<string, AbiType> = {}): string {
  const params = method?.params ?? [];
  if (params.length === 0) return '{}';
  const value = Object.fromEntries(params.map((p) => [p.name, p.nullable ? null : placeholder(p.type, types)]));
  return JSON.stringify(value, null, 2);
}

/** The question asked before a method that writes runs. */
export function writeQuestion(method: AbiMethod, contextName: string): string {
  return isDestructive(method)
    ? `${method.name} may delete state of ${contextName}, on every node that holds it. Run it?`
    : `${method.name} changes the state of ${contextName}, on every node that holds it. Run it?`;
}

/**
 * The view method that lists the state's entries, for the state browser: a read-only method without
 * parameters that returns a map or a list — `entries` when there is one, else the first such.
 */
export function entriesMethod(methods: AbiMethod[], types: Record<string, AbiType> = {}): AbiMethod | undefined {
  const resolve = (t: AbiType | undefined): AbiType | undefined => (t?.$ref ? types[t.$ref] : t);
  const lists = methods.filter((m) => isReadOnly(m) && (m.params ?? []).length === 0 && ['map', 'list'].includes(resolve(m.returns)?.kind ?? ''));
  return lists.find((m) => m.name === 'entries') ?? lists.find((m) => /entries|list|all|items/i.test(m.name)) ?? lists[0];
}
