/** The logger's default writer: stderr in batches (every 25 ms or 512 lines), and nothing lost when the process exits at once. */
import test from "ava";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { repoRoot } from "@corral/deploy";

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
