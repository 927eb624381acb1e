import { createHash, randomBytes } from "node:crypto";
import { link, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
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
 *
 * When the provisioner removes a tenant's files (`retire`), the claim's content is replaced (`retired:<name>`) but
 * the id stays taken for good: a later tenant of the same name probes past it to a new id, so whatever the old id
 * may still own anywhere on the machine is not its.
 */
export class TenantIds {
  private readonly known = new Map<string, Promise<number>>();

  constructor(private readonly workDir: string) {}

  /** The tenant's id, claimed on first use; checked against its claim, which another provisioner may have retired. */
  async of(tenant: string): Promise<number> {
    const segment = pathSegment(tenant);
    const cached = this.known.get(segment);
    if (cached) {
      const id = await cached;
      if ((await this.holder(id)) === segment) return id;
      if (this.known.get(segment) === cached) this.known.delete(segment);
      return this.of(tenant);
    }
    const id = this.claim(segment);
    this.known.set(segment, id);
    id.catch(() => this.known.delete(segment));
    return id;
  }

  /** The id the tenant holds now, without claiming one. */
  async held(tenant: string): Promise<number | undefined> {
    const segment = pathSegment(tenant);
    for (let step = 0; step < SANDBOX_ID_COUNT; step++) {
      const id = idAt(segment, step);
      const holder = await this.holder(id);
      if (holder === undefined) return undefined;
      if (holder === segment) return id;
    }
    return undefined;
  }

  /** Ends the tenant's hold on its id for good (see the class); answers the id, if it held one. */
  async retire(tenant: string): Promise<number | undefined> {
    const segment = pathSegment(tenant);
    this.known.delete(segment);
    const id = await this.held(tenant);
    if (id === undefined) return undefined;
    const draft = join(this.dir(), `.retire-${randomBytes(6).toString("hex")}`);
    await writeFile(draft, `retired:${segment}`, { flag: "wx", mode: 0o600 });
    await rename(draft, join(this.dir(), String(id)));
    return id;
  }

  private dir(): string {
    return join(sandboxStateDir(this.workDir), "ids");
  }

  /** What the claim file of `id` holds; undefined when the id is free. */
  private async holder(id: number): Promise<string | undefined> {
    return readFile(join(this.dir(), String(id)), "utf8").catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    });
  }

  private async claim(segment: string): Promise<number> {
    const dir = this.dir();
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const draft = join(dir, `.claim-${randomBytes(6).toString("hex")}`);
    await writeFile(draft, segment, { flag: "wx", mode: 0o600 });
    try {
      for (let step = 0; step < SANDBOX_ID_COUNT; step++) {
        const id = idAt(segment, step);
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

/** The `step`th id a tenant's probe tries: from a hash of its directory name on. */
function idAt(segment: string, step: number): number {
  const start = createHash("sha256").update(segment).digest().readUInt32BE(0) % SANDBOX_ID_COUNT;
  return SANDBOX_ID_BASE + ((start + step) % SANDBOX_ID_COUNT);
}
