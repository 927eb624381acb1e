/**
 * The command list against the endpoint table: every REST row is exactly one command, named by the rule in
 * endpoint-commands.ts, taking its path parameters as arguments; no two commands answer to the same words.
 */
import test from "ava";
import { endpointList } from "@corral/contracts";
import { findCommand } from "../src/command-line.js";
import { allCommands } from "../src/commands/index.js";
import { commandWordsOf, isCommandRow } from "../src/commands/endpoint-commands.js";

test("commands - every REST endpoint of the table has a command, and every command's words find it", (t) => {
  const commands = allCommands();
  const rest = endpointList().filter(({ endpoint }) => isCommandRow(endpoint));
  t.true(rest.length > 60, "the table's REST rows");
  // The docs page and its files answer HTML, scripts and styles: a browser's, not a command's.
  t.deepEqual(
    endpointList().filter(({ endpoint }) => endpoint.rest && !isCommandRow(endpoint)).map(({ name }) => name),
    ["gateway.docs", "gateway.docsFile"],
  );
  for (const { name, endpoint } of rest) {
    const words = commandWordsOf(name);
    const found = findCommand(commands, words);
    t.truthy(found, `${name}: corral ${words.join(" ")}`);
    const routes = endpoint.rest?.routes ?? [];
    // The export row is served by the hand-written `export`, which also writes folders.
    if (name !== "tenancy.export") t.regex(found?.command.summary ?? "", new RegExp(`^${routes[0]?.method} ${routes[0]?.path}`), name);
  }
  const names = commands.map((c) => c.words.join(" "));
  t.deepEqual(names.filter((n, i) => names.indexOf(n) !== i), [], "no two commands share their words");
  for (const command of commands) {
    t.is(findCommand(commands, [...command.words])?.command, command, `corral ${command.words.join(" ")} finds itself`);
  }
});

test("commands - names read noun verb and answer to the singular", (t) => {
  t.deepEqual(commandWordsOf("tenancy.catalog.clustertemplates.get"), ["clustertemplates", "get"]);
  t.deepEqual(commandWordsOf("clusters.getConfig"), ["clusters", "config", "get"]);
  t.deepEqual(commandWordsOf("clusters.extendLease"), ["clusters", "lease", "extend"]);
  t.deepEqual(commandWordsOf("plugins.listVersions"), ["plugins", "versions", "list"]);
  t.deepEqual(commandWordsOf("metrics.nodeUsage"), ["metrics", "node-usage"]);
  t.deepEqual(commandWordsOf("tenancy.hostpool.release"), ["hostpool", "release"]);
  const commands = allCommands();
  t.deepEqual(findCommand(commands, ["cluster", "create", "--name", "x"])?.command.words, ["clusters", "create"]);
  t.deepEqual(findCommand(commands, ["--url", "h:1", "cluster", "plan", "1", "2"])?.command.words, ["clusters", "plan"]);
  t.deepEqual(findCommand(commands, ["clusters", "plans", "1"])?.command.words, ["clusters", "plans"]);
});
