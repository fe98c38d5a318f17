// A guest importing a host function no node provides: instantiation must fail with a clear link error.
@external("env", "not_a_host_function") declare function not_a_host_function(x: u64): void;

export function run(): void {
  not_a_host_function(1);
}
