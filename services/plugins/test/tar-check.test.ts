/** The archive layout check of plugin resources (services/plugins/README.md, Storage), fed crafted archives. */
import test from "ava";
import { gunzipSync } from "node:zlib";
import { ArchiveLayoutError, createTarChecker } from "@corral/plugins/testing";
import { resourceArchive, tar, type TarEntry } from "./tar-builder.js";

/** Runs the checker over `bytes` in pieces of `piece` bytes; the error message, or the entry count. */
function check(name: string, bytes: Uint8Array, piece = bytes.length || 1): number | string {
  const checker = createTarChecker(name);
  try {
    for (let i = 0; i < bytes.length; i += piece) checker.push(bytes.subarray(i, i + piece));
    return checker.end();
  } catch (err) {
    if (!(err instanceof ArchiveLayoutError)) throw err;
    return err.message;
  }
}

const good: TarEntry[] = [
  { name: "nginx/", type: "dir" },
  { name: "nginx/recipes/", type: "dir" },
  { name: "nginx/recipes/default.rb", content: "x".repeat(1500) },
  { name: "nginx/empty.txt" },
];

test("tar check - one top-level directory named as the resource is accepted, in any piece size", (t) => {
  const bytes = tar(good);
  for (const piece of [1, 7, 511, 512, 513, 4096, bytes.length]) t.is(check("nginx", bytes, piece), 4, `piece ${piece}`);
});

test("tar check - the usual gzip layout, once decompressed, is accepted", (t) => {
  t.is(check("example", gunzipSync(resourceArchive("example", { "a.txt": "a", "b/c.txt": "c" }))), 3);
});

test("tar check - entries without a directory entry, and ./ prefixes, are accepted", (t) => {
  t.is(check("x", tar([{ name: "x/a" }, { name: "x/b" }])), 2);
  t.is(check("x", tar([{ name: "./", type: "dir" }, { name: "./x/", type: "dir" }, { name: "./x/a" }])), 3);
});

test("tar check - a wrong top-level name is refused", (t) => {
  t.regex(String(check("nginx", tar([{ name: "other/", type: "dir" }, { name: "other/a" }]))), /single top-level directory named nginx.*"other"/);
});

test("tar check - two top-level entries are refused", (t) => {
  t.regex(String(check("x", tar([{ name: "x/a" }, { name: "y/b" }]))), /"y"/);
  t.regex(String(check("x", tar([{ name: "x/a" }, { name: "README" }]))), /"README"/);
});

test("tar check - a top-level file named as the resource is refused", (t) => {
  t.regex(String(check("x", tar([{ name: "x", content: "hi" }]))), /must be a directory/);
});

test("tar check - absolute paths and .. are refused", (t) => {
  t.regex(String(check("x", tar([{ name: "/x/a" }]))), /absolute/);
  t.regex(String(check("x", tar([{ name: "x/../../etc/passwd" }]))), /\.\./);
  t.regex(String(check("x", tar([{ name: "x/a", pax: { path: "x/../y" } }]))), /\.\./);
});

test("tar check - links must stay inside the top-level directory", (t) => {
  t.is(check("x", tar([{ name: "x/a" }, { name: "x/l", type: "symlink", linkname: "a" }])), 2);
  t.is(check("x", tar([{ name: "x/d/a" }, { name: "x/d/l", type: "symlink", linkname: "../d/a" }])), 2);
  t.is(check("x", tar([{ name: "x/a" }, { name: "x/h", type: "hardlink", linkname: "x/a" }])), 2);
  t.regex(String(check("x", tar([{ name: "x/l", type: "symlink", linkname: "/etc/passwd" }]))), /absolute/);
  t.regex(String(check("x", tar([{ name: "x/l", type: "symlink", linkname: "../../etc" }]))), /leaves|outside/);
  t.regex(String(check("x", tar([{ name: "x/l", type: "symlink", linkname: ".." }]))), /leaves|outside/);
  t.regex(String(check("x", tar([{ name: "x/h", type: "hardlink", linkname: "y/a" }]))), /outside/);
});

test("tar check - FIFOs and devices are refused", (t) => {
  t.regex(String(check("x", tar([{ name: "x/", type: "dir" }, { name: "x/p", type: "fifo" }]))), /unsupported type/);
});

test("tar check - pax and GNU long names replace the header name", (t) => {
  const long = `x/${"d".repeat(150)}/file.txt`;
  t.is(check("x", tar([{ name: "ignored", pax: { path: long }, content: "a" }])), 1);
  t.is(check("x", tar([{ name: "ignored", gnuLongName: long, content: "a" }])), 1);
  t.regex(String(check("x", tar([{ name: "x/a", gnuLongName: "y/long" }]))), /"y"/);
});

test("tar check - not a tar, truncated and empty archives are refused", (t) => {
  t.regex(String(check("x", Buffer.from("just some text, not an archive at all".repeat(20)))), /not a tar archive/);
  t.regex(String(check("x", Buffer.from("tiny"))), /not a tar archive/);
  t.regex(String(check("x", Buffer.alloc(0))), /not a tar archive/);
  t.regex(String(check("x", tar([{ name: "x/a", content: "y".repeat(2000) }]).subarray(0, 1024))), /truncated/);
  t.regex(String(check("x", tar([]))), /empty/);
  const corrupt = tar(good);
  corrupt[600] = (corrupt[600] ?? 0) ^ 0xff; // inside the second header
  t.regex(String(check("nginx", corrupt)), /corrupt/);
});

test("tar check - bytes after the end-of-archive marker are ignored", (t) => {
  const bytes = Buffer.concat([tar([{ name: "x/a" }]), Buffer.from("trailing garbage")]);
  t.is(check("x", bytes), 1);
});

test("tar check - one end block, or none after the last entry, is accepted (streams cut short by some tools)", (t) => {
  t.is(check("x", tar([{ name: "x/a", content: "z" }], { endBlocks: 1 })), 1);
  t.is(check("x", tar([{ name: "x/a", content: "z" }], { endBlocks: 0 })), 1);
});
