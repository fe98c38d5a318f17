/** Input sanitising of the reference's auth handlers (auth-wire §2.1, §2.6, §2.11). */

export const identifierOnly = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '');

export const printableAscii = (s: string): string => s.replace(/[^\x20-\x7e]/g, '');

/** 64-hex ids compare case-insensitively; answer them lowercase. */
export const normaliseId = (s: string): string => (/^[0-9a-fA-F]{64}$/.test(s) ? s.toLowerCase() : s);
