/**
 * The little semver the bundle rules need (semver.org §9–§11): parsing `x.y.z[-pre][+build]` and
 * precedence, for `minRuntimeVersion` and for "latest version" of a package.
 */

export interface SemVer {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string[];
}

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

export function parseSemver(text: string): SemVer | undefined {
  const m = SEMVER.exec(text);
  if (!m) return undefined;
  return { major: BigInt(m[1]), minor: BigInt(m[2]), patch: BigInt(m[3]), pre: m[4] ? m[4].split('.') : [] };
}

const cmp = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

function comparePre(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return b.length - a.length; // a release ranks above its pre-releases
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    if (xn && yn) {
      const c = cmp(BigInt(x), BigInt(y));
      if (c) return c;
    } else if (xn !== yn) {
      return xn ? -1 : 1; // numeric identifiers rank below alphanumeric ones
    } else if (x !== y) {
      return x < y ? -1 : 1;
    }
  }
  return a.length - b.length;
}

export function compareSemver(a: SemVer, b: SemVer): number {
  return cmp(a.major, b.major) || cmp(a.minor, b.minor) || cmp(a.patch, b.patch) || Math.sign(comparePre(a.pre, b.pre));
}

/**
 * Orders version strings for "latest" (admin-wire-a §3.3): semver by precedence; a non-semver
 * string ranks below every semver one; two non-semver strings compare lexicographically.
 */
export function compareVersions(a: string, b: string): number {
  const x = parseSemver(a);
  const y = parseSemver(b);
  if (x && y) return compareSemver(x, y) || (a < b ? -1 : a > b ? 1 : 0);
  if (x) return 1;
  if (y) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}
