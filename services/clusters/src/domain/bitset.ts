/** A fixed-size set of small integers stored as base64, so it persists compactly (10,000 tasks: 1.7 kB). */
export function emptyBits(size: number): string {
  return Buffer.alloc(Math.ceil(size / 8)).toString("base64");
}

export function hasBit(bits: string, i: number): boolean {
  const bytes = Buffer.from(bits, "base64");
  return ((bytes[i >> 3] ?? 0) & (1 << (i & 7))) !== 0;
}

export function withBit(bits: string, i: number): string {
  const bytes = Buffer.from(bits, "base64");
  bytes[i >> 3] = (bytes[i >> 3] ?? 0) | (1 << (i & 7));
  return bytes.toString("base64");
}
