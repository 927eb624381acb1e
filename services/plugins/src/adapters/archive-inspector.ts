import { createGunzip, type Gunzip } from "node:zlib";
import { once } from "node:events";
import { BadRequestError } from "@corral/contracts";
import { ArchiveLayoutError, createTarChecker } from "../domain/tar-check.js";
import type { ByteInspector } from "./blob-store.js";

/**
 * Checks an archive resource while its bytes stream past: gzip-compressed (detected by its magic
 * bytes) or plain tar, unpacking to one top-level directory named as the resource. Nothing is buffered beyond
 * zlib's window and one tar header; a gzip bomb of zeros stops at the end-of-archive marker.
 * Failures are 400 `invalid_archive`.
 */
export function createArchiveInspector(resourceName: string): ByteInspector {
  const checker = createTarChecker(resourceName);
  let mode: "unknown" | "gzip" | "tar" = "unknown";
  let head = new Uint8Array(0);
  let gunzip: Gunzip | undefined;
  let failure: unknown;

  const invalid = (err: unknown): BadRequestError => {
    if (err instanceof BadRequestError) return err;
    const reason =
      err instanceof ArchiveLayoutError ? err.message : `not a valid gzip stream (${(err as Error)?.message ?? String(err)})`;
    return new BadRequestError(`invalid archive for resource ${resourceName}: ${reason}`, undefined, "invalid_archive");
  };

  const startGunzip = (): Gunzip => {
    const z = createGunzip();
    z.on("data", (out: Buffer) => {
      if (failure || checker.isFinished) return;
      try {
        checker.push(out);
      } catch (err) {
        failure = err;
      }
    });
    z.on("error", (err) => {
      // Bytes after the end-of-archive marker (trailing garbage) do not matter.
      if (!checker.isFinished) failure ??= err;
    });
    return z;
  };

  const feed = async (bytes: Uint8Array): Promise<void> => {
    if (mode === "tar") {
      if (!checker.isFinished) checker.push(bytes);
      return;
    }
    const z = gunzip as Gunzip;
    if (checker.isFinished || failure) return;
    if (!z.write(bytes)) await once(z, "drain");
  };

  const check = (): void => {
    if (failure) throw invalid(failure);
  };

  return {
    async write(chunk) {
      try {
        if (mode === "unknown") {
          const joined = new Uint8Array(head.length + chunk.length);
          joined.set(head);
          joined.set(chunk, head.length);
          if (joined.length < 2) {
            head = joined;
            return;
          }
          mode = joined[0] === 0x1f && joined[1] === 0x8b ? "gzip" : "tar";
          if (mode === "gzip") gunzip = startGunzip();
          head = new Uint8Array(0);
          await feed(joined);
        } else {
          await feed(chunk);
        }
        check();
      } catch (err) {
        throw invalid(err);
      }
    },
    async end() {
      try {
        if (mode === "unknown") {
          mode = "tar";
          if (head.length) checker.push(head);
        }
        if (gunzip && !failure && !checker.isFinished) {
          const ended = once(gunzip, "end"); // rejects on "error"
          gunzip.end();
          await ended.catch((err: unknown) => {
            failure ??= err;
          });
        }
        gunzip?.destroy();
        check();
        checker.end();
      } catch (err) {
        throw invalid(err);
      }
    },
  };
}
