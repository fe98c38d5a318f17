/** File-system error codes in words, for messages people read (issue #16: no bare ENOENT). */
const TEXT: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  EEXIST: 'it already exists',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
};

/** The reason a file operation failed, in words (the code itself when it is not a common one). */
export function errnoText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  return (code && TEXT[code]) ?? code ?? (err instanceof Error ? err.message : String(err));
}
