// A guest importing a real host function with the wrong type (i32 instead of the reference's i64).
@external("env", "log_utf8") declare function log_utf8(ptr: u32): void;

export function run(): void {
  log_utf8(0);
}
