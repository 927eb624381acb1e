/**
 * Builds small tar archives in memory for tests, including ones real tools refuse to write (absolute paths, `..`,
 * escaping links, FIFOs), so the archive checks can be exercised entry by entry.
 */
import { gzipSync } from "node:zlib";

export interface TarEntry {
  /** Path as stored (no normalisation). */
  name: string;
  /** @default "file" */
  type?: "file" | "dir" | "symlink" | "hardlink" | "fifo";
  content?: string | Uint8Array;
  linkname?: string;
  /** Written as a pax `x` header before the entry. */
  pax?: Record<string, string>;
  /** Written as a GNU `L` long-name entry before the entry. */
  gnuLongName?: string;
  /** @default 0o644 (files), 0o755 (directories) */
  mode?: number;
}

const TYPEFLAG = { file: "0", dir: "5", symlink: "2", hardlink: "1", fifo: "6" } as const;

function header(name: string, typeflag: string, size: number, mode: number, linkname = ""): Buffer {
  const h = Buffer.alloc(512);
  h.write(name.slice(0, 100), 0, "utf8");
  h.write(mode.toString(8).padStart(7, "0") + "\0", 100, "ascii");
  h.write("0000000\0", 108, "ascii");
  h.write("0000000\0", 116, "ascii");
  h.write(size.toString(8).padStart(11, "0") + "\0", 124, "ascii");
  h.write("14000000000\0", 136, "ascii");
  h.write("        ", 148, "ascii");
  h.write(typeflag, 156, "ascii");
  h.write(linkname.slice(0, 100), 157, "utf8");
  h.write("ustar\0", 257, "ascii");
  h.write("00", 263, "ascii");
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, "ascii");
  return h;
}

const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512);

function withData(h: Buffer, data: Buffer): Buffer[] {
  return [h, data, pad(data.length)];
}

function paxRecords(records: Record<string, string>): Buffer {
  let out = "";
  for (const [k, v] of Object.entries(records)) {
    const body = ` ${k}=${v}\n`;
    let len = body.length + 1;
    while (String(len).length + body.length !== len) len = String(len).length + body.length;
    out += `${len}${body}`;
  }
  return Buffer.from(out, "utf8");
}

/** A tar archive (with its two zero end blocks). */
export function tar(entries: readonly TarEntry[], options: { endBlocks?: number } = {}): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const type = e.type ?? "file";
    if (e.pax) {
      const data = paxRecords(e.pax);
      parts.push(...withData(header("PaxHeader", "x", data.length, 0o644), data));
    }
    if (e.gnuLongName !== undefined) {
      const data = Buffer.from(e.gnuLongName + "\0", "utf8");
      parts.push(...withData(header("././@LongLink", "L", data.length, 0o644), data));
    }
    const data = type === "file" ? Buffer.from(e.content ?? "") : Buffer.alloc(0);
    const mode = e.mode ?? (type === "dir" ? 0o755 : 0o644);
    parts.push(...withData(header(e.name, TYPEFLAG[type], data.length, mode, e.linkname ?? ""), data));
  }
  parts.push(Buffer.alloc(512 * (options.endBlocks ?? 2)));
  return Buffer.concat(parts);
}

/** A gzip-compressed tar archive. */
export function tarGz(entries: readonly TarEntry[]): Buffer {
  return gzipSync(tar(entries));
}

/** The usual layout of an archive resource `name`: a directory with a couple of files. */
export function resourceArchive(name: string, files: Record<string, string> = { "readme.txt": "hello\n" }): Buffer {
  return tarGz([
    { name: `${name}/`, type: "dir" },
    ...Object.entries(files).map(([file, content]): TarEntry => ({ name: `${name}/${file}`, content })),
  ]);
}
