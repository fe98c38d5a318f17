// The kv-store test app's state layout (shared by test/apps/kv.ts and its upgraded versions): a
// newline-separated key list under `kv:state`, one entry per key under `kv:item:<key>`, and the
// committed root, a simple deterministic hash of the sorted entries (the host treats it as opaque).
import * as sdk from './sdk';

export const STATE_KEY = 'kv:state';
export const ITEM = 'kv:item:';

export function keysOf(): string[] {
  const raw = sdk.storageRead(sdk.utf8(STATE_KEY));
  if (raw === null) sdk.panic('Failed to find or read app state', 'apps/kv/src/lib.rs', 123, 16);
  const s = sdk.text(raw!);
  return s.length == 0 ? [] : s.split('\n');
}

export function saveKeys(keys: string[]): void {
  sdk.storageWrite(sdk.utf8(STATE_KEY), sdk.utf8(keys.join('\n')));
}

export function getItem(key: string): string | null {
  const v = sdk.storageRead(sdk.utf8(ITEM + key));
  return v === null ? null : sdk.text(v!);
}

/** FNV-1a over the sorted entries, spread over four lanes: 32 bytes */
export function commitState(keys: string[]): void {
  const sorted = keys.slice(0);
  sorted.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const root = new ArrayBuffer(32);
  for (let lane = 0; lane < 4; lane++) {
    let h: u64 = 0xcbf29ce484222325 ^ (<u64>lane * 0x9e3779b97f4a7c15);
    for (let i = 0; i < sorted.length; i++) {
      const item = getItem(sorted[i]);
      const entry = sdk.utf8(sorted[i] + '=' + (item === null ? '' : item!) + ';');
      const u = Uint8Array.wrap(entry);
      for (let j = 0; j < u.length; j++) h = (h ^ <u64>u[j]) * 0x100000001b3;
    }
    store<u64>(changetype<usize>(root) + lane * 8, h);
  }
  sdk.commit(root, sdk.utf8('kv-delta:' + sorted.length.toString()));
}

