/** Reading JSON or YAML documents given on the command line: a file, `-` for stdin, or inline text. */
import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { UsageError } from "./errors.js";

/** The document in `path` (`-`: stdin), JSON or YAML. */
export async function readDocument(path: string, stdin: NodeJS.ReadableStream): Promise<unknown> {
  const text = path === "-" ? await readAll(stdin) : await readText(path);
  return parseDocument(text, path === "-" ? "stdin" : path);
}

/** JSON, else YAML (a superset of JSON, but slower and with its own messages, so JSON is tried first). */
export function parseDocument(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    try {
      return parseYaml(text);
    } catch (err) {
      throw new UsageError(`${where} is neither JSON nor YAML: ${(err as Error).message.split("\n")[0]}`);
    }
  }
}

/** Raw bytes of a file or stdin (uploads). */
export async function readBytes(path: string, stdin: NodeJS.ReadableStream): Promise<Uint8Array> {
  return path === "-" ? Buffer.concat(await chunksOf(stdin)) : readFileBytes(path);
}

async function readFileBytes(path: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

async function readText(path: string): Promise<string> {
  return Buffer.from(await readFileBytes(path)).toString("utf8");
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  return Buffer.concat(await chunksOf(stream)).toString("utf8");
}

async function chunksOf(stream: NodeJS.ReadableStream): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk));
  return chunks;
}
