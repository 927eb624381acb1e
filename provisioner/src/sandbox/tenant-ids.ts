import { createHash, randomBytes } from "node:crypto";
import { link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathSegment } from "../paths.js";

/** First uid/gid of tenant sandbox users: far above any account a distribution or an admin creates. */
export const SANDBOX_ID_BASE = 2_000_000;
/** How many ids tenants share (probing past a collision stays inside). */
export const SANDBOX_ID_COUNT = 1_000_000;

/** `<workDir>/.sandbox`: the sandbox's own records (root only). `pathSegment` escapes a tenant named `.sandbox`. */
export const sandboxStateDir = (workDir: string) => join(workDir, ".sandbox");

/**
 * The uid (and gid, the same number) of a tenant's sandbox user under one work directory. No passwd entry is
 * needed: actions are started with the number.
 *
 * The id starts at a hash of the tenant's directory name and is claimed by linking a complete file holding that
 * name to `<workDir>/.sandbox/ids/<id>` (a link never replaces, so a claim is atomic and never half written); a
 * claim of another tenant moves the probe to the next id. So
 * two tenants never share an id, even with provisioners sharing the work directory, and a tenant keeps its id
 * across restarts.
 */
export class TenantIds {
  private readonly known = new Map<string, Promise<number>>();

  constructor(private readonly workDir: string) {}

  of(tenant: string): Promise<number> {
    const segment = pathSegment(tenant);
    let id = this.known.get(segment);
    if (!id) {
      id = this.claim(segment);
      this.known.set(segment, id);
      id.catch(() => this.known.delete(segment));
    }
    return id;
  }

  private async claim(segment: string): Promise<number> {
    const dir = join(sandboxStateDir(this.workDir), "ids");
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const start = createHash("sha256").update(segment).digest().readUInt32BE(0) % SANDBOX_ID_COUNT;
    const draft = join(dir, `.claim-${randomBytes(6).toString("hex")}`);
    await writeFile(draft, segment, { flag: "wx", mode: 0o600 });
    try {
      for (let step = 0; step < SANDBOX_ID_COUNT; step++) {
        const id = SANDBOX_ID_BASE + ((start + step) % SANDBOX_ID_COUNT);
        const file = join(dir, String(id));
        try {
          await link(draft, file);
          return id;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        }
        if ((await readFile(file, "utf8")) === segment) return id;
      }
    } finally {
      await rm(draft, { force: true });
    }
    throw new Error(`no sandbox user id is free for tenant ${segment}`);
  }
}
