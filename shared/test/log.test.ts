/** The logger's default writer: stderr in batches (every 25 ms or 512 lines), and nothing lost when the process exits at once. */
import test from "ava";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

const run = (script: string) =>
  promisify(execFile)(process.execPath, ["--import=tsx", "--input-type=module", "-e", script], { cwd: repoRoot, encoding: "utf8" });

test("log - lines of one turn reach stderr together, in order, and lines logged right before process.exit are written", async (t) => {
  const { stderr, stdout } = await run(`
    import { createLogger } from "@corral/shared";
    const log = createLogger({ service: "t" });
    for (let i = 0; i < 3; i++) log.info("line", { i });
    setImmediate(() => {
      log.warn("after a turn");
      log.debug("below the level");
      log.error("last", { err: new Error("boom") });
      process.exit(0);
    });
  `);
  t.is(stdout, "");
  const lines = stderr.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  t.deepEqual(
    lines.map((l) => [l["level"], l["msg"], l["i"]]),
    [
      ["info", "line", 0],
      ["info", "line", 1],
      ["info", "line", 2],
      ["warn", "after a turn", undefined],
      ["error", "last", undefined],
    ],
  );
  t.like(lines[4], { service: "t", err: { name: "Error", message: "boom" } });
});

test("log - processes sharing one stderr pipe (the launcher's children) never cut into each other's lines", async (t) => {
  // A shell starts four writers on the same pipe; each logs 3000 lines of ~300 bytes in bursts (batches far over PIPE_BUF).
  const writer = `
    import { createLogger } from "@corral/shared";
    const log = createLogger({ service: process.argv[1] });
    let burst = 0;
    const tick = () => {
      for (let i = 0; i < 300; i++) log.info("line", { i: burst * 300 + i, pad: "x".repeat(240) });
      if (++burst < 10) setTimeout(tick, 1); else setTimeout(() => process.exit(0), 1);
    };
    tick();
  `;
  const node = JSON.stringify(process.execPath);
  const one = (name: string) => `${node} --import=tsx --input-type=module -e '${writer}' ${name}`;
  const { stderr } = await promisify(execFile)("sh", ["-c", ["a", "b", "c", "d"].map((n) => `${one(n)} &`).join(" ") + " wait"], {
    cwd: repoRoot,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const lines = stderr.trim().split("\n");
  const parsed = lines.map((l) => JSON.parse(l) as { service: string; i: number });
  t.is(parsed.length, 4 * 3000);
  for (const name of ["a", "b", "c", "d"]) {
    const mine = parsed.filter((l) => l.service === name).map((l) => l.i);
    t.deepEqual(mine, Array.from({ length: 3000 }, (_, i) => i), `${name}: every line once, in order`);
  }
});
