/** The process around a run of `corral`: arguments, standard streams, environment, exit code. */
import { runCli } from "./run.js";

// A reader that stops early (`corral status | head`) is not an error.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw err;
});

const code = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env });
// Let stdout drain (a pipe is written asynchronously) before leaving.
process.exitCode = code;
