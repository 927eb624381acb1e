/**
 * The workspaces' dependencies are what their code imports: every workspace imported (by a source file, a test or
 * a script of the workspace) is declared in its package.json, by package name (never by a path into another
 * workspace), with "*" or the version it has; nothing is declared that nothing imports; and no workspaces depend
 * on each other in a cycle.
 */
import test from "ava";
import { dependencyCycles, importsOf, workspaces } from "./workspace-graph.js";

const all = workspaces();

test("workspaces - every import of another workspace is by package name and declared", (t) => {
  const problems: string[] = [];
  for (const w of all) {
    for (const i of importsOf(w, all)) {
      if (!i.target) problems.push(`${i.file}: imports ${i.specifier}, which no workspace is`);
      else if (i.byPath) problems.push(`${i.file}: imports ${i.specifier} by path; import ${i.target.name} by name (and declare it)`);
      else if (!(i.target.name in w.declared)) problems.push(`${i.file}: imports ${i.specifier}, which ${w.dir}/package.json does not declare`);
    }
  }
  t.deepEqual([...new Set(problems)], []);
});

test("workspaces - a declared workspace is imported and declared with its version", (t) => {
  const problems: string[] = [];
  for (const w of all) {
    const imported = new Set(importsOf(w, all).flatMap((i) => (i.target ? [i.target.name] : [])));
    for (const [name, range] of Object.entries(w.declared)) {
      const target = all.find((x) => x.name === name);
      if (!target) continue;
      if (range !== "*" && range !== target.version) problems.push(`${w.dir}: ${name} "${range}" (its version is ${target.version}; or "*")`);
      if (!imported.has(name)) problems.push(`${w.dir}: declares ${name}, which none of its files imports`);
    }
  }
  t.deepEqual(problems, []);
});

test("workspaces - no two depend on each other, directly or around a cycle", (t) => {
  t.deepEqual(
    dependencyCycles(all).map((cycle) => cycle.join(" -> ")),
    [],
  );
});
