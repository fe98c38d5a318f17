// A guest with no host imports at all (used with asc flags to build malformed shapes:
// imported memory, an exported `_start`, no exported memory).
let n: i32 = 0;

export function run(): void {
  n++;
}
