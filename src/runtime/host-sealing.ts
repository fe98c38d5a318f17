/**
 * The `seal_to` and `open_sealed` host functions (core `crates/runtime/src/logic/host_functions/
 * sealing.rs`): `seal_to(key_ptr, plaintext_ptr, dest_register) -> u32` seals to a 32-byte Ed25519
 * key (1 = envelope in the register, 0 = the key is not a usable point) and is available in every
 * run; `open_sealed(sealed_ptr, dest_register) -> u32` opens with the key the node holds for the
 * run's executor (1 = plaintext in the register, 0 = malformed, sealed to another key or tampered,
 * indistinguishably) and traps as TEE-only when the node gave the run no key.
 */
import type { GuestMemory } from './guest-memory.ts';
import type { HostFn, HostState, SyncBackend } from './host-state.ts';
import { sealEnvelope } from './sealing.ts';
import { HostErrors } from './trap.ts';

export function sealingImports(backend: SyncBackend, state: HostState, m: GuestMemory): Record<string, HostFn> {
  const { desc, read, readSized } = m;
  return {
    seal_to(keyPtr, plaintextPtr, reg) {
      const keyBuf = desc(keyPtr);
      const plaintextBuf = desc(plaintextPtr);
      const key = readSized(keyBuf, 32);
      const envelope = sealEnvelope(key, read(plaintextBuf));
      if (!envelope) return 0;
      state.setRegister(reg, envelope);
      return 1;
    },
    open_sealed(sealedPtr, reg) {
      // the reference refuses before touching memory when the run was given no key
      if (!backend.hasSealing || !backend.openSealed) throw HostErrors.teeOnly('open_sealed');
      const sealed = read(desc(sealedPtr));
      // even a malformed envelope goes to the node: whether it holds a key for the run decides first
      const outcome = backend.openSealed(sealed);
      if (outcome.opened === null) {
        if (outcome.reason === 'no-key') throw HostErrors.teeOnly('open_sealed');
        return 0;
      }
      state.setRegister(reg, outcome.opened);
      return 1;
    },
  };
}
