// Version 2 of the kv-store test app (group upgrades, issue #15): every kv method, plus `version`
// and the migration entry `migrate` declared in kv_v2.abi.json. The migration records where the
// state came from (`__migrated` = "<from>-><to>") and refuses while the key `block` is set, so a
// test can make a migration fail, fix the data on the previous version, and retry. Every node runs
// the migration itself, so it stamps its write from the state alone: the same state migrates to
// the same rows everywhere.
import * as sdk from './lib/sdk';
import { commitState, getItem, keysOf, putLocal, saveKeys, useStateStamp } from './lib/kvstore';

export * from './kv';

export function version(): void {
  sdk.noArguments('version');
  sdk.returnOk('"2.0.0"');
}

export function migrate(): void {
  const args = sdk.readInput();
  const from = sdk.jsonString(args, 'fromVersion');
  const to = sdk.jsonString(args, 'toVersion');
  if (getItem('block') !== null) sdk.panic('migration refused: the key "block" is set');
  const keys = keysOf();
  useStateStamp();
  if (!putLocal('__migrated', (from === null ? '?' : from!) + '->' + (to === null ? '?' : to!))) keys.push('__migrated');
  saveKeys(keys);
  commitState();
}
