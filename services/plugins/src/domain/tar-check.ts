/**
 * An incremental tar header reader that checks the layout rule of archive resources: the archive unpacks
 * to one top-level directory named exactly as the resource. It sees the bytes once, in pieces of any size, keeps
 * only the current 512-byte header (and bounded extended-header data), and skips file contents without holding them.
 *
 * Understood: ustar/v7 headers (name + prefix), GNU long names and link names (`L`, `K`), pax extended headers
 * (`x`: `path`, `linkpath`, `size`; `g` is skipped), base-256 sizes. Refused: absolute paths, `..` components,
 * links that leave the top-level directory, device and FIFO entries, bad header checksums, truncated archives.
 */

const BLOCK = 512;
/** Largest pax or GNU long-name payload kept in memory. */
const MAX_EXTENDED_BYTES = 64 * 1024;

/** Why an archive was refused (becomes the 400 message). */
export class ArchiveLayoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArchiveLayoutError";
  }
}

/** Feeds decompressed tar bytes; `end()` settles the verdict. Both throw ArchiveLayoutError. */
export interface TarChecker {
  push(bytes: Uint8Array): void;
  /** True once the end-of-archive marker was read: later bytes are ignored (padding, trailing data). */
  readonly isFinished: boolean;
  /** Checks the archive is complete and had content; returns the number of entries. */
  end(): number;
}

type Pending = { kind: "header" } | { kind: "skip"; left: number } | { kind: "collect"; left: number; pad: number; typeflag: string; data: number[] };

/** Creates a checker for the archive of resource `resourceName` (a NAME other than `.` and `..`). */
export function createTarChecker(resourceName: string): TarChecker {
  const header = new Uint8Array(BLOCK);
  let headerFill = 0;
  let pending: Pending = { kind: "header" };
  let zeroBlocks = 0;
  let finished = false;
  let entries = 0;
  let sawContent = false;
  // Overrides for the next entry, from pax `x` headers or GNU `L` / `K` entries.
  let nextPath: string | undefined;
  let nextLink: string | undefined;
  let nextSize: number | undefined;

  const checkPath = (raw: string, what: string): string[] => {
    if (raw.startsWith("/")) throw new ArchiveLayoutError(`${what} "${raw}" is an absolute path`);
    const parts = raw.split("/").filter((p) => p !== "" && p !== ".");
    if (parts.includes("..")) throw new ArchiveLayoutError(`${what} "${raw}" contains ".."`);
    return parts;
  };

  const checkLinkTarget = (entryParts: string[], target: string, isHardLink: boolean): void => {
    if (target.startsWith("/")) throw new ArchiveLayoutError(`link target "${target}" is an absolute path`);
    // A hard link names a path from the archive root; a symlink is relative to the directory holding it.
    const stack = isHardLink ? [] : entryParts.slice(0, -1);
    for (const part of target.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        stack.pop();
        if (stack.length === 0) throw new ArchiveLayoutError(`link target "${target}" leaves the directory ${resourceName}`);
      } else stack.push(part);
    }
    if (stack[0] !== resourceName || stack.length < 2) {
      throw new ArchiveLayoutError(`link target "${target}" points outside the directory ${resourceName}`);
    }
  };

  const onEntry = (typeflag: string, path: string, link: string): void => {
    entries++;
    const parts = checkPath(path, "entry");
    const isDirectory = typeflag === "5" || (path.endsWith("/") && (typeflag === "0" || typeflag === "\0"));
    if (parts.length === 0) {
      if (isDirectory) return; // "./": the archive root itself
      throw new ArchiveLayoutError(`entry "${path}" has an empty name`);
    }
    const top = parts[0];
    if (top !== resourceName) {
      throw new ArchiveLayoutError(
        `the archive must unpack to a single top-level directory named ${resourceName}, but it holds "${top}"`,
      );
    }
    if (parts.length === 1 && !isDirectory) {
      throw new ArchiveLayoutError(`the top-level entry ${resourceName} must be a directory`);
    }
    switch (typeflag) {
      case "0":
      case "\0":
      case "7":
      case "5":
        break;
      case "1":
        checkLinkTarget(parts, link, true);
        break;
      case "2":
        checkLinkTarget(parts, link, false);
        break;
      default:
        throw new ArchiveLayoutError(`entry "${path}" has an unsupported type "${typeflag}" (devices and FIFOs are refused)`);
    }
    sawContent = true;
  };

  const readHeader = (): void => {
    if (header.every((b) => b === 0)) {
      if (++zeroBlocks === 2) finished = true;
      return;
    }
    if (zeroBlocks > 0) throw new ArchiveLayoutError("a zero block is followed by more entries");
    if (!checksumOk(header)) {
      throw new ArchiveLayoutError(entries === 0 ? "not a tar archive (gzip-compressed or plain)" : "a tar header is corrupt");
    }
    const typeflag = String.fromCharCode(header[156] ?? 0);
    const size = nextSize ?? parseNumber(header.subarray(124, 136));
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (typeflag === "x" || typeflag === "L" || typeflag === "K") {
      if (size > MAX_EXTENDED_BYTES) throw new ArchiveLayoutError(`an extended header of ${size} bytes is too large`);
      pending = size === 0 ? { kind: "header" } : { kind: "collect", left: size, pad: padded - size, typeflag, data: [] };
      if (size === 0) applyExtended(typeflag, []);
      nextSize = undefined;
      return;
    }
    if (typeflag === "g") {
      pending = padded === 0 ? { kind: "header" } : { kind: "skip", left: padded };
      return;
    }
    const isUstar = text(header.subarray(257, 262)) === "ustar";
    const prefix = isUstar ? text(header.subarray(345, 500)) : "";
    const name = text(header.subarray(0, 100));
    const path = nextPath ?? (prefix ? `${prefix}/${name}` : name);
    const link = nextLink ?? text(header.subarray(157, 257));
    nextPath = nextLink = nextSize = undefined;
    onEntry(typeflag, path, link);
    // Links and directories carry no data whatever their size field says (except with pax overrides; be strict).
    const dataBytes = typeflag === "1" || typeflag === "2" || typeflag === "5" ? 0 : padded;
    pending = dataBytes === 0 ? { kind: "header" } : { kind: "skip", left: dataBytes };
  };

  const applyExtended = (typeflag: string, data: number[]): void => {
    const bytes = Uint8Array.from(data);
    if (typeflag === "L") nextPath = text(bytes);
    else if (typeflag === "K") nextLink = text(bytes);
    else {
      const records = parsePax(bytes);
      if (records.has("path")) nextPath = records.get("path");
      if (records.has("linkpath")) nextLink = records.get("linkpath");
      const size = records.get("size");
      if (size !== undefined) {
        if (!/^\d+$/.test(size)) throw new ArchiveLayoutError(`a pax size "${size}" is not a number`);
        nextSize = Number(size);
      }
    }
  };

  return {
    get isFinished() {
      return finished;
    },
    push(bytes) {
      let i = 0;
      while (i < bytes.length && !finished) {
        if (pending.kind === "skip") {
          const n = Math.min(pending.left, bytes.length - i);
          pending.left -= n;
          i += n;
          if (pending.left === 0) pending = { kind: "header" };
        } else if (pending.kind === "collect") {
          const p = pending;
          if (p.left > 0) {
            const n = Math.min(p.left, bytes.length - i);
            for (let k = 0; k < n; k++) p.data.push(bytes[i + k] ?? 0);
            p.left -= n;
            i += n;
          } else {
            const n = Math.min(p.pad, bytes.length - i);
            p.pad -= n;
            i += n;
          }
          if (p.left === 0 && p.pad === 0) {
            pending = { kind: "header" };
            applyExtended(p.typeflag, p.data);
          }
        } else {
          const n = Math.min(BLOCK - headerFill, bytes.length - i);
          header.set(bytes.subarray(i, i + n), headerFill);
          headerFill += n;
          i += n;
          if (headerFill === BLOCK) {
            headerFill = 0;
            readHeader();
          }
        }
      }
    },
    end() {
      if (!finished) {
        // GNU tar and others may end with one zero block or none when a stream is cut after the last entry's data;
        // anything mid-header or mid-data is truncated.
        if (entries === 0 && zeroBlocks === 0) throw new ArchiveLayoutError("not a tar archive (gzip-compressed or plain)");
        if (headerFill !== 0 || pending.kind !== "header") throw new ArchiveLayoutError("the archive is truncated");
      }
      if (!sawContent) throw new ArchiveLayoutError(`the archive is empty; it must hold the directory ${resourceName}`);
      return entries;
    },
  };
}

/** A NUL-terminated field as UTF-8 text. */
function text(field: Uint8Array): string {
  const end = field.indexOf(0);
  return Buffer.from(field.subarray(0, end === -1 ? field.length : end)).toString("utf8");
}

/** A numeric header field: octal text, or base-256 when the high bit of the first byte is set. */
function parseNumber(field: Uint8Array): number {
  if (((field[0] ?? 0) & 0x80) !== 0) {
    let n = (field[0] ?? 0) & 0x7f;
    for (let i = 1; i < field.length; i++) n = n * 256 + (field[i] ?? 0);
    if (!Number.isSafeInteger(n)) throw new ArchiveLayoutError("a tar size field is too large");
    return n;
  }
  const digits = text(field).trim();
  if (digits === "") return 0;
  if (!/^[0-7]+$/.test(digits)) throw new ArchiveLayoutError(`a tar number field "${digits}" is not octal`);
  return parseInt(digits, 8);
}

/** Header checksum: the unsigned byte sum with the checksum field itself counted as spaces. */
function checksumOk(block: Uint8Array): boolean {
  const stored = text(block.subarray(148, 156)).trim();
  if (!/^[0-7]+$/.test(stored)) return false;
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] ?? 0);
  return sum === parseInt(stored, 8);
}

/** pax records: `<length> <key>=<value>\n`. */
function parsePax(bytes: Uint8Array): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < bytes.length) {
    const space = bytes.indexOf(0x20, i);
    if (space === -1) break;
    const length = Number(Buffer.from(bytes.subarray(i, space)).toString("ascii"));
    if (!Number.isInteger(length) || length <= 0 || i + length > bytes.length) {
      throw new ArchiveLayoutError("a pax extended header is malformed");
    }
    const record = Buffer.from(bytes.subarray(space + 1, i + length - 1)).toString("utf8");
    const eq = record.indexOf("=");
    if (eq > 0) out.set(record.slice(0, eq), record.slice(eq + 1));
    i += length;
  }
  return out;
}
