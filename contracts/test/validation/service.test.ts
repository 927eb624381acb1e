import test from "ava";
import type { PluginSpec } from "../../src/entities.js";
import { parseService, type ServiceValidationContext } from "../../src/validation/index.js";
import { CHEF_SOLO, CATALOG_CONTEXT, SHELL, fixture, throws400 } from "./helpers.js";

const EMPTY_DEPENDENCIES = {
  provides: [],
  conflicts: [],
  install: { requires: [], uses: [] },
  runtime: { requires: [], uses: [] },
};

function chef(runList: string): { type: string; fields: Record<string, string> } {
  return { type: "chef-solo", fields: { run_list: runList } };
}

/** A service body with the given actions. */
function service(actions: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: "svc", provisioner: { actions }, ...extra };
}

test("service - the reference service parses to its canonical form", (t) => {
  const body = {
    name: "hosts-1.0",
    description: "Manages /etc/hosts",
    version: 1,
    dependencies: {
      provides: ["hosts"],
      conflicts: ["hosts-1.1"],
      install: { requires: [], uses: ["base"] },
      runtime: { requires: [], uses: ["base"] },
    },
    provisioner: { actions: { configure: chef("recipe[hosts::default]") } },
    links: [],
  };
  const parsed = parseService(body, CATALOG_CONTEXT);
  t.deepEqual(parsed, {
    name: "hosts-1.0",
    description: "Manages /etc/hosts",
    dependencies: body.dependencies,
    provisioner: { actions: { configure: chef("recipe[hosts::default]") } },
  });
  t.deepEqual(Object.keys(parsed), ["name", "description", "dependencies", "provisioner"]);
  t.not(parsed.dependencies, body.dependencies);
  t.not(parsed.provisioner.actions.configure, body.provisioner.actions.configure);
});

test("service - dependencies are always complete", (t) => {
  t.deepEqual(parseService(service({}), CATALOG_CONTEXT).dependencies, EMPTY_DEPENDENCIES);
  t.deepEqual(parseService(service({}, { dependencies: null }), CATALOG_CONTEXT).dependencies, EMPTY_DEPENDENCIES);
  t.deepEqual(parseService(service({}, { dependencies: {} }), CATALOG_CONTEXT).dependencies, EMPTY_DEPENDENCIES);
  t.deepEqual(
    parseService(service({}, { dependencies: { install: { uses: ["base"] }, runtime: {} } }), CATALOG_CONTEXT)
      .dependencies,
    {
      ...EMPTY_DEPENDENCIES,
      install: { requires: [], uses: ["base"] },
    },
  );
});

test("service - dependency lists are kept exactly as given", (t) => {
  const deps = parseService(
    service({}, { dependencies: { provides: ["b", "a", "b", "c", "a"], runtime: { requires: ["x", "x"] } } }),
    CATALOG_CONTEXT,
  ).dependencies;
  t.deepEqual(deps.provides, ["b", "a", "b", "c", "a"]);
  t.deepEqual(deps.runtime.requires, ["x", "x"]);
});

test("service - dependency errors name the entry", (t) => {
  throws400(
    t,
    () => parseService(service({}, { dependencies: [] }), CATALOG_CONTEXT),
    "dependencies must be an object (got an array)",
    "dependencies",
  );
  throws400(
    t,
    () => parseService(service({}, { dependencies: { provides: "hosts" } }), CATALOG_CONTEXT),
    `dependencies.provides must be an array of names (got "hosts")`,
    "dependencies.provides",
  );
  throws400(
    t,
    () => parseService(service({}, { dependencies: { install: { requires: ["base", "bad name"] } } }), CATALOG_CONTEXT),
    `dependencies.install.requires[1] must contain only letters, digits, '.', '_' and '-' (got "bad name")`,
    "dependencies.install.requires[1]",
  );
  throws400(
    t,
    () => parseService(service({}, { dependencies: { runtime: "x" } }), CATALOG_CONTEXT),
    `dependencies.runtime must be an object (got "x")`,
    "dependencies.runtime",
  );
  throws400(
    t,
    () => parseService(service({}, { dependencies: { conflicts: [1] } }), CATALOG_CONTEXT),
    "dependencies.conflicts[0] must be a string (got 1)",
    "dependencies.conflicts[0]",
  );
});

test("service - provisioner and actions are required; actions may be empty", (t) => {
  t.deepEqual(parseService(service({}), CATALOG_CONTEXT).provisioner, { actions: {} });
  throws400(t, () => parseService({ name: "svc" }, CATALOG_CONTEXT), "provisioner is required", "provisioner");
  throws400(
    t,
    () => parseService({ name: "svc", provisioner: {} }, CATALOG_CONTEXT),
    "provisioner.actions is required",
    "provisioner.actions",
  );
  throws400(
    t,
    () => parseService({ name: "svc", provisioner: { actions: [] } }, CATALOG_CONTEXT),
    "provisioner.actions must be an object (got an array)",
    "provisioner.actions",
  );
});

test("service - only the six action names are allowed, in lower case", (t) => {
  const all = {
    install: chef("a"),
    configure: chef("b"),
    initialize: chef("c"),
    start: chef("d"),
    stop: chef("e"),
    remove: chef("f"),
  };
  t.deepEqual(parseService(service(all), CATALOG_CONTEXT).provisioner.actions, all);
  const allowed = "(allowed: install, configure, initialize, start, stop, remove)";
  for (const name of ["Install", "START", "bootstrap", "create", "delete", "confirm"]) {
    throws400(
      t,
      () => parseService(service({ [name]: chef("x") }), CATALOG_CONTEXT),
      `provisioner.actions.${name} is not an allowed action ${allowed}`,
      `provisioner.actions.${name}`,
    );
  }
});

test("service - actions come back in canonical order", (t) => {
  const actions = parseService(service({ stop: chef("s"), install: chef("i"), start: chef("t") }), CATALOG_CONTEXT)
    .provisioner.actions;
  t.deepEqual(Object.keys(actions), ["install", "start", "stop"]);
});

test("service - action shape", (t) => {
  throws400(
    t,
    () => parseService(service({ install: "chef" }), CATALOG_CONTEXT),
    `provisioner.actions.install must be an object (got "chef")`,
    "provisioner.actions.install",
  );
  throws400(
    t,
    () => parseService(service({ install: {} }), CATALOG_CONTEXT),
    "provisioner.actions.install.type is required",
    "provisioner.actions.install.type",
  );
  throws400(
    t,
    () => parseService(service({ install: { type: "" } }), CATALOG_CONTEXT),
    "provisioner.actions.install.type must not be empty",
    "provisioner.actions.install.type",
  );
  throws400(
    t,
    () => parseService(service({ install: { type: "chef-solo", fields: [] } }), CATALOG_CONTEXT),
    "provisioner.actions.install.fields must be an object (got an array)",
    "provisioner.actions.install.fields",
  );
  throws400(
    t,
    () => parseService(service({ install: { type: "chef-solo", fields: { run_list: { a: 1 } } } }), CATALOG_CONTEXT),
    "provisioner.actions.install.fields.run_list must be a string (got an object)",
    "provisioner.actions.install.fields.run_list",
  );
});

test("service - unknown automator type", (t) => {
  throws400(
    t,
    () => parseService(service({ start: { type: "puppet", fields: {} } }), CATALOG_CONTEXT),
    "provisioner.actions.start.type: automator type puppet is not a known automator plugin type",
    "provisioner.actions.start.type",
  );
});

test("service - fields must be declared by the automator type", (t) => {
  throws400(
    t,
    () =>
      parseService(service({ install: { type: "chef-solo", fields: { run_list: "r", recipe: "x" } } }), CATALOG_CONTEXT),
    "provisioner.actions.install.fields.recipe is not a field of automator type chef-solo (declared: run_list, json_attributes)",
    "provisioner.actions.install.fields.recipe",
  );
  throws400(
    t,
    () =>
      parseService(service({ configure: { type: "shell", fields: { script: "s", run_list: "r" } } }), CATALOG_CONTEXT),
    "provisioner.actions.configure.fields.run_list is not a field of automator type shell (declared: script, args, timeout_s)",
    "provisioner.actions.configure.fields.run_list",
  );
});

test("service - chef-solo requires a non-empty run_list", (t) => {
  t.deepEqual(
    parseService(
      service({ install: { type: "chef-solo", fields: { run_list: "r", json_attributes: "{}" } } }),
      CATALOG_CONTEXT,
    ).provisioner.actions.install,
    {
      type: "chef-solo",
      fields: { run_list: "r", json_attributes: "{}" },
    },
  );
  for (const fields of [undefined, {}, { run_list: "" }, { json_attributes: "{}" }]) {
    throws400(
      t,
      () => parseService(service({ install: { type: "chef-solo", fields } }), CATALOG_CONTEXT),
      "provisioner.actions.install.fields: run_list is required by automator type chef-solo",
      "provisioner.actions.install.fields",
    );
  }
});

test("service - shell requires a script; args are optional; numbers become strings", (t) => {
  t.deepEqual(
    parseService(service({ start: { type: "shell", fields: { script: "run.sh", args: 3 } } }), CATALOG_CONTEXT)
      .provisioner.actions.start,
    {
      type: "shell",
      fields: { script: "run.sh", args: "3" },
    },
  );
  throws400(
    t,
    () => parseService(service({ start: { type: "shell", fields: { args: "-v" } } }), CATALOG_CONTEXT),
    "provisioner.actions.start.fields: script is required by automator type shell",
    "provisioner.actions.start.fields",
  );
});

/** An automator with two alternative required sets. */
const ALTERNATIVES: PluginSpec = {
  name: "multi",
  parameters: {
    admin: {
      fields: { a: { label: "A", type: "text" }, b: { label: "B", type: "text" }, c: { label: "C", type: "text" } },
      required: [["a", "b"], ["c"]],
    },
  },
};

function withSpecs(...specs: PluginSpec[]): ServiceValidationContext {
  return { automatorType: (name) => specs.find((s) => s.name === name) };
}

test("service - required is a list of alternative sets: any one fully present satisfies it", (t) => {
  const ctx = withSpecs(ALTERNATIVES);
  t.notThrows(() => parseService(service({ install: { type: "multi", fields: { a: "1", b: "2" } } }), ctx));
  t.notThrows(() => parseService(service({ install: { type: "multi", fields: { c: "3" } } }), ctx));
  t.notThrows(() => parseService(service({ install: { type: "multi", fields: { a: "1", c: "3" } } }), ctx));
});

test("service - when no set is satisfied, the missing fields of the first set are named", (t) => {
  const ctx = withSpecs(ALTERNATIVES);
  throws400(
    t,
    () => parseService(service({ install: { type: "multi", fields: { a: "1", c: "" } } }), ctx),
    "provisioner.actions.install.fields: b is required by automator type multi",
    "provisioner.actions.install.fields",
  );
  throws400(
    t,
    () => parseService(service({ install: { type: "multi" } }), ctx),
    "provisioner.actions.install.fields: a, b are required by automator type multi",
    "provisioner.actions.install.fields",
  );
});

test("service - no admin parameters or an empty required list means no field checks", (t) => {
  const bare: PluginSpec = { name: "bare" };
  const open: PluginSpec = {
    name: "open",
    parameters: { admin: { fields: { x: { label: "X", type: "text" } }, required: [] } },
  };
  const userOnly: PluginSpec = { name: "user-only", parameters: { user: { fields: {}, required: [["u"]] } } };
  const ctx = withSpecs(bare, open, userOnly);
  t.deepEqual(
    parseService(service({ install: { type: "bare", fields: { anything: "goes" } } }), ctx).provisioner.actions.install
      ?.fields,
    {
      anything: "goes",
    },
  );
  t.deepEqual(parseService(service({ install: { type: "open" } }), ctx).provisioner.actions.install, {
    type: "open",
    fields: {},
  });
  t.notThrows(() => parseService(service({ install: { type: "user-only", fields: { z: "1" } } }), ctx));
});

test("service - the automator specs of the test catalog are the ones used above", (t) => {
  t.deepEqual(CHEF_SOLO.parameters?.admin?.required, [["run_list"]]);
  t.deepEqual(SHELL.parameters?.admin?.required, [["script"]]);
});

test("service - the test catalog's kube-apiserver parses", (t) => {
  const apiserver = parseService(fixture("services/kube-apiserver.json"), CATALOG_CONTEXT);
  t.deepEqual(apiserver.dependencies.install, { requires: ["base"], uses: ["containerd"] });
  t.deepEqual(apiserver.dependencies.runtime, { requires: ["etcd"], uses: ["vault-agent"] });
  t.deepEqual(Object.keys(apiserver.provisioner.actions), ["install", "configure", "initialize", "start", "stop"]);
});
