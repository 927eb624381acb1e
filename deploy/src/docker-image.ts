import { spawn } from "node:child_process";
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { ensureNatsServer, ensureRedisServer } from "./binaries.js";
import { buildCompiled } from "./build.js";
import { dockerRequest, streamError } from "./docker.js";
import { run } from "./exec.js";
import { ensureNodeImage, NODE_IMAGE } from "./node-image.js";
import { defaultStateDir, repoRoot } from "./paths.js";

/** The image deploy/docker/compose.yaml runs unless `CORRAL_IMAGE` names another. */
export const CORRAL_IMAGE = "corral/corral:latest";
const DOCKERFILE = "deploy/docker/Dockerfile";
const BUILD_TIMEOUT_MS = 20 * 60_000;

/** What of the repository goes into the image: the workspaces (sources and compiled dist/) and the installed node_modules. */
const REPO_PATHS = ["package.json", "package-lock.json", "tsconfig.json", "node_modules", "contracts", "shared", "services", "provisioner", "deploy", "console", "cli", "plugins", "docs"];
/** Not needed to run: tests, other platforms' uWebSockets.js builds, the type checker, the browser driver. */
const EXCLUDED = [
  "*/test",
  "deploy/systemd",
  "node_modules/.cache",
  "node_modules/uWebSockets.js/binaries/uws_darwin_*",
  "node_modules/uWebSockets.js/binaries/uws_win32_*",
  "node_modules/uWebSockets.js/binaries/uws_linux_arm*",
  "node_modules/typescript",
  "node_modules/puppeteer-core",
  "node_modules/chromium-bidi",
  "node_modules/devtools-protocol",
];
/** Libraries every Debian base has (apt needs them): redis-server's others are copied next to it. */
const BASE_LIBRARIES = /^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux-x86-64|ld-linux-aarch64)\.so/;

/** Options for {@link buildCorralImage}. */
export interface CorralImageOptions {
  /** @default {@link CORRAL_IMAGE} */
  tag?: string;
  /** Receives progress lines. @default no output */
  log?: (line: string) => void;
  /** Binary cache, locks and the build's staging directory. @default `<repo>/.corral` or `CORRAL_DATA_DIR` */
  stateDir?: string;
}

/**
 * Builds Corral's image from deploy/docker/Dockerfile on {@link NODE_IMAGE} (built first when missing), with this
 * machine's node, nats-server (2.10+) and redis-server: no image registry is needed. The TypeScript is compiled
 * first when its dist/ is missing or stale (build.ts). The build context is the repository's workspaces (with their
 * dist/) and node_modules plus those programs, streamed to the Engine API as a tar archive; an unchanged layer
 * (node_modules, the programs) is taken from Docker's cache.
 */
export async function buildCorralImage(opts: CorralImageOptions = {}): Promise<string> {
  const tag = opts.tag ?? CORRAL_IMAGE;
  const log = opts.log ?? (() => {});
  const stateDir = opts.stateDir ?? defaultStateDir();
  await ensureNodeImage({ log, stateDir });
  // The image's processes run the compiled JavaScript, which comes with the workspaces: fresh before they are sent.
  await buildCompiled({ log });
  await mkdir(join(stateDir, "tmp"), { recursive: true });
  const staging = await mkdtemp(join(stateDir, "tmp", "corral-image-"));
  try {
    await stagePrograms(staging, stateDir, log);
    const started = Date.now();
    log(`building ${tag} from ${DOCKERFILE} on ${NODE_IMAGE}`);
    await postBuild(tag, staging);
    log(`built ${tag} in ${Math.round((Date.now() - started) / 1000)} s`);
    return tag;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * `image-bin/`: node, nats-server and a redis-server wrapper; `image-lib/redis/`: the redis-server binary and the
 * libraries it links that a minimal Debian lacks (liblzf, libjemalloc, ...), found with ldd.
 */
async function stagePrograms(staging: string, stateDir: string, log: (line: string) => void): Promise<void> {
  const bin = join(staging, "image-bin");
  const redisLib = join(staging, "image-lib", "redis");
  await mkdir(bin, { recursive: true });
  await mkdir(redisLib, { recursive: true });
  const [nats, redis] = await Promise.all([ensureNatsServer(stateDir, log), ensureRedisServer(stateDir, log)]);
  await copyFile(process.execPath, join(bin, "node"));
  await copyFile(nats, join(bin, "nats-server"));
  await copyFile(redis, join(redisLib, "redis-server"));
  for (const library of await linkedLibraries(redis)) {
    await copyFile(library, join(redisLib, basename(library)));
  }
  const wrapper = join(bin, "redis-server");
  await writeFile(wrapper, '#!/bin/sh\nLD_LIBRARY_PATH=/usr/local/lib/corral/redis exec /usr/local/lib/corral/redis/redis-server "$@"\n');
  await chmod(wrapper, 0o755);
}

/** The resolved paths of the shared libraries `binary` links, but those of glibc and the C++ runtime. */
async function linkedLibraries(binary: string): Promise<string[]> {
  const result = await run("ldd", [binary]);
  if (result.code !== 0) {
    throw new Error(`ldd ${binary} failed: ${result.stderr.trim()}`);
  }
  const libraries: string[] = [];
  for (const line of result.stdout.split("\n")) {
    const m = /^\s*(\S+) => (\/\S+)/.exec(line);
    if (m?.[1] && m[2] && !BASE_LIBRARIES.test(m[1])) {
      libraries.push(m[2]);
    }
  }
  return libraries;
}

/** `tar | POST /build`: the repository's paths and the staged programs in one archive. */
async function postBuild(tag: string, staging: string): Promise<void> {
  const query = new URLSearchParams({ t: tag, dockerfile: DOCKERFILE, buildargs: JSON.stringify({ BASE_IMAGE: NODE_IMAGE }), rm: "1", forcerm: "1" });
  query.append("labels", JSON.stringify({ "corral.image": "corral" }));
  const args = [...EXCLUDED.map((p) => `--exclude=${p}`), "-C", repoRoot, ...REPO_PATHS, "-C", staging, "image-bin", "image-lib"];
  const tar = spawn("tar", ["-c", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let tarErrors = "";
  tar.stderr.setEncoding("utf8").on("data", (chunk: string) => (tarErrors += chunk));
  const tarExit = new Promise<number | null>((resolvePromise, reject) => {
    tar.once("error", reject);
    tar.once("close", resolvePromise);
  });
  const res = await dockerRequest("POST", `/build?${query.toString()}`, { body: tar.stdout, timeoutMs: BUILD_TIMEOUT_MS });
  const tarCode = await tarExit;
  if (tarCode !== 0) {
    throw new Error(`tar of the build context failed (exit ${tarCode}): ${tarErrors.trim()}`);
  }
  const failure = res.status !== 200 ? res.body : streamError(res.body);
  if (failure !== undefined) {
    throw new Error(`docker build of ${tag} failed (HTTP ${res.status}): ${failure.trim()}\n${buildOutputTail(res.body)}`);
  }
}

/** The last lines the build printed (`{"stream": ...}` messages), to show with a failure. */
function buildOutputTail(body: string): string {
  const lines: string[] = [];
  for (const line of body.split("\n")) {
    try {
      const message = JSON.parse(line) as { stream?: string };
      if (message.stream) lines.push(message.stream.trimEnd());
    } catch {
      // not a JSON line
    }
  }
  return lines.slice(-20).join("\n");
}
