/**
 * Bad input on every endpoint (docs/architecture.md, Errors): every malformed request gets a 4xx JSON error,
 * nothing crashes, nothing is half-written. Each case expects `{status, error, message}` with the HTTP
 * status, and each test checks afterwards that the stored state did not change.
 *
 * Tests are serial: each compares the whole state (tenants, catalogs, provisioners) before and after.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import type { Provisioner } from "@corral/contracts";
import { api, SUPERADMIN, type Caller } from "../helpers/api.js";
import { assertError, assertOk, show } from "../helpers/assertions.js";
import { changed, createTenant, KINDS, sample, uniqueName, type TestTenant } from "../helpers/catalog.js";
import { registerFixturePluginTypes, registerProvisioner } from "../helpers/registry.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

interface Context {
  sys: TestSystem;
  /** The tenant the catalog endpoints act on; holds one entity `existing` of every kind. */
  tenant: TestTenant;
  /** A tenant with workers 0 that a DELETE would remove if a check let it through. */
  victim: TestTenant;
}
const test = anyTest as TestFn<Context>;
type T = ExecutionContext<Context>;

const EXISTING = "existing";
const PROVISIONER: Provisioner = {
  id: "prov-1",
  host: "prov-1.example.com",
  port: 55056,
  capacityTotal: 4,
  capacityFree: 4,
  assignments: {},
  usage: {},
};

test.before(async (t) => {
  const sys = await startSystem();
  t.context.sys = sys;
  await registerFixturePluginTypes(sys.nc);
  await registerProvisioner(sys.nc, PROVISIONER);
  t.context.tenant = await createTenant(sys.baseUrl, "bad");
  t.context.victim = await createTenant(sys.baseUrl, "victim");
  for (const kind of KINDS) {
    for (const who of [t.context.tenant, { admin: SUPERADMIN }]) {
      const res = await api(sys.baseUrl, "POST", `/${kind}`, { ...who.admin, body: sample[kind](EXISTING) });
      if (res.status !== 200) throw new Error(`seeding ${kind}: ${show(res)}`);
    }
  }
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
});

// -------------------------------------------------------------------------------------------------------------
// The endpoint table

type Role = "superadmin" | "admin" | "user";

interface Endpoint {
  method: string;
  path: string;
  /** The least privileged role allowed. */
  role: Role;
  /** A valid body (for endpoints that take one), which would change state if it got through. */
  body?: () => unknown;
  /** The kind of catalog entity in the path, if any. */
  kind?: (typeof KINDS)[number];
}

function endpoints(t: T): Endpoint[] {
  const { tenant, victim } = t.context;
  const list: Endpoint[] = [
    { method: "GET", path: "/tenants", role: "superadmin" },
    {
      method: "POST",
      path: "/tenants",
      role: "superadmin",
      body: () => ({ tenant: { name: uniqueName("new"), workers: 0 } }),
    },
    { method: "GET", path: `/tenants/${tenant.name}`, role: "superadmin" },
    {
      method: "PUT",
      path: `/tenants/${tenant.name}`,
      role: "superadmin",
      body: () => ({ tenant: { name: tenant.name, workers: 3, description: "changed" } }),
    },
    { method: "DELETE", path: `/tenants/${victim.name}`, role: "superadmin" },
    { method: "GET", path: "/provisioners", role: "superadmin" },
    { method: "GET", path: `/provisioners/${PROVISIONER.id}`, role: "superadmin" },
  ];
  for (const kind of KINDS) {
    list.push(
      { method: "GET", path: `/${kind}`, role: "user", kind },
      { method: "POST", path: `/${kind}`, role: "admin", kind, body: () => sample[kind](uniqueName("new")) },
      { method: "GET", path: `/${kind}/${EXISTING}`, role: "user", kind },
      { method: "PUT", path: `/${kind}/${EXISTING}`, role: "admin", kind, body: () => changed[kind](EXISTING) },
      { method: "DELETE", path: `/${kind}/${EXISTING}`, role: "admin", kind },
    );
  }
  list.push(
    { method: "GET", path: "/export", role: "user" },
    { method: "POST", path: "/import", role: "admin", body: () => ({}) },
  );
  return list;
}

const withBody = (t: T) => endpoints(t).filter((e) => e.body !== undefined);

/** A caller allowed on the endpoint: the superadmin for tenant and provisioner routes, else the tenant admin. */
function allowed(t: T, e: Endpoint): Caller {
  return e.role === "superadmin" ? SUPERADMIN : t.context.tenant.admin;
}

const label = (e: Endpoint, what: string) => `${e.method} ${e.path} (${what})`;

/** Everything the API can show: tenants, both catalogs, provisioners. */
async function snapshot(t: T) {
  const base = t.context.sys.baseUrl;
  const read = async (path: string, caller: Caller) => {
    const res = await api(base, "GET", path, caller);
    if (res.status !== 200) throw new Error(`snapshot ${path}: ${show(res)}`);
    return res.body;
  };
  return {
    tenants: await read("/tenants", SUPERADMIN),
    catalog: await read("/export", t.context.tenant.admin),
    superadminCatalog: await read("/export", SUPERADMIN),
    provisioners: await read("/provisioners", SUPERADMIN),
  };
}

/** Runs `body` and checks the state is the same afterwards. */
async function unchanged(t: T, body: () => Promise<void>) {
  const before = await snapshot(t);
  await body();
  t.deepEqual(await snapshot(t), before, "state unchanged");
}

const send = (t: T, e: Endpoint, options: Parameters<typeof api>[3]) =>
  api(t.context.sys.baseUrl, e.method, e.path, options);

// -------------------------------------------------------------------------------------------------------------
// Identity

test.serial("bad input - missing identity headers are 401 on every endpoint", async (t) => {
  const tenant = t.context.tenant.name;
  const variants: Array<[string, Caller & { headers?: Record<string, string> }]> = [
    ["no headers", {}],
    ["only Service-UserID", { user: "admin" }],
    ["only Service-TenantID", { tenant }],
    ["empty Service-UserID", { user: "", tenant }],
    ["empty Service-TenantID", { user: "admin", tenant: "" }],
    ["only Service-ApiKey", { headers: { "Service-ApiKey": "key" } }],
  ];
  await unchanged(t, async () => {
    for (const e of endpoints(t)) {
      for (const [what, caller] of variants) {
        assertError(t, await send(t, e, { ...caller, body: e.body?.() }), 401, label(e, what));
      }
    }
  });
});

test.serial("bad input - an unknown tenant is 401 on every endpoint", async (t) => {
  const tenants = [uniqueName("no-such-tenant"), "bad name", "superadmin2", "SUPERADMIN", "*", ">", "a.b"];
  await unchanged(t, async () => {
    for (const e of endpoints(t)) {
      for (const tenant of tenants) {
        assertError(
          t,
          await send(t, e, { user: "admin", tenant, body: e.body?.() }),
          401,
          label(e, `tenant ${tenant}`),
        );
      }
    }
  });
});

// -------------------------------------------------------------------------------------------------------------
// Bodies

test.serial("bad input - broken JSON is 400 on every endpoint that takes a body", async (t) => {
  const raws: Array<string | Uint8Array> = [
    "{",
    '{"name": }',
    "{'name': 'x'}",
    '{"name": "x",}',
    '{"name": "x"}}',
    "nul",
    "[1,]",
    "undefined",
    '{"name": "x" "workers": 0}',
    "\u0000",
    "<xml/>",
    "NaN",
    new Uint8Array([0xff, 0xfe, 0x7b]),
  ];
  await unchanged(t, async () => {
    for (const e of withBody(t)) {
      for (const rawBody of raws) {
        const res = await send(t, e, { ...allowed(t, e), rawBody, headers: { "content-type": "application/json" } });
        assertError(t, res, 400, label(e, `body ${JSON.stringify(String(rawBody))}`));
      }
    }
  });
});

test.serial("bad input - JSON of the wrong type is 400 on every endpoint that takes a body", async (t) => {
  const raws = ["[]", "[{}]", '"a string"', "42", "-1.5", "null", "true", "false", '[{"name": "x"}]'];
  await unchanged(t, async () => {
    for (const e of withBody(t)) {
      for (const rawBody of raws) {
        assertError(t, await send(t, e, { ...allowed(t, e), rawBody }), 400, label(e, `body ${rawBody}`));
      }
    }
  });
});

test.serial("bad input - an empty body is 400 on every endpoint that takes a body", async (t) => {
  await unchanged(t, async () => {
    for (const e of withBody(t)) {
      for (const rawBody of ["", "   ", "\n\t"]) {
        assertError(
          t,
          await send(t, e, { ...allowed(t, e), rawBody }),
          400,
          label(e, `body ${JSON.stringify(rawBody)}`),
        );
      }
      assertError(t, await send(t, e, allowed(t, e)), 400, label(e, "no body at all"));
    }
  });
});

/** Bodies with a required field missing or of the wrong type, per endpoint (by method and kind). */
function badBodies(t: T, e: Endpoint): Array<[string, unknown]> {
  const tenantName = e.method === "PUT" ? t.context.tenant.name : uniqueName("fresh");
  const name = e.method === "PUT" ? EXISTING : uniqueName("fresh");
  const tenant = (fields: Record<string, unknown>) => ({ tenant: { name: tenantName, workers: 0, ...fields } });
  if (e.path.startsWith("/tenants")) {
    return [
      ["{}", {}],
      ["no tenant", { bootstrap: true }],
      ["empty tenant", { tenant: {} }],
      ["no name", { tenant: { workers: 0 } }],
      ["no workers", { tenant: { name: tenantName } }],
      ["tenant a string", { tenant: "x" }],
      ["tenant an array", { tenant: [tenantName] }],
      ["name a number", { tenant: { name: 5, workers: 0 } }],
      ["workers a word", tenant({ workers: "x" })],
      ["workers null", tenant({ workers: null })],
      ["workers an object", tenant({ workers: { n: 1 } })],
      ["description a number", tenant({ description: 5 })],
      ["maxClusters an array", tenant({ maxClusters: [] })],
      ["maxNodes a fraction", tenant({ maxNodes: 0.5 })],
      ["bootstrap a word", { ...tenant({}), bootstrap: "yes" }],
    ];
  }
  if (e.path === "/import") {
    return [
      ["providers an object", { providers: {} }],
      ["providers a string", { providers: "x" }],
      ["an empty provider", { providers: [{}] }],
      ["a provider without providertype", { providers: [{ name }] }],
      ["a hardware type without providermap", { hardwaretypes: [{ name }] }],
      ["a service without provisioner", { services: [{ name }] }],
      ["a template without defaults", { clustertemplates: [{ name, compatibility: {} }] }],
      ["an entity a number", { imagetypes: [7] }],
    ];
  }
  const common: Array<[string, unknown]> = [
    ["name a number", { ...sample[e.kind!](name), name: 5 }],
    ["name an object", { ...sample[e.kind!](name), name: { n: 1 } }],
    ["description a number", { ...sample[e.kind!](name), description: 5 }],
    ["description an object", { ...sample[e.kind!](name), description: { d: 1 } }],
  ];
  const byKind: Record<string, Array<[string, unknown]>> = {
    providers: [
      ["providertype a number", { name, providertype: 5 }],
      ["providertype an array", { name, providertype: ["aws"] }],
      ["provisioner a string", { name, providertype: "aws", provisioner: "x" }],
      ["provisioner an array", { name, providertype: "aws", provisioner: [] }],
    ],
    hardwaretypes: [
      ["{}", {}],
      ["only a name", { name }],
      ["providermap a string", { name, providermap: "x" }],
      ["providermap an array", { name, providermap: [{ flavor: "x" }] }],
      ["providermap entry null", { name, providermap: { aws: null } }],
    ],
    imagetypes: [
      ["{}", {}],
      ["only a name", { name }],
      ["providermap a number", { name, providermap: 1 }],
      ["providermap value null", { name, providermap: { aws: { image: null } } }],
    ],
    services: [
      ["{}", {}],
      ["only a name", { name }],
      ["provisioner an array", { name, provisioner: [] }],
      ["actions an array", { name, provisioner: { actions: [] } }],
      ["action a string", { name, provisioner: { actions: { install: "chef-solo" } } }],
      ["action type a number", { name, provisioner: { actions: { install: { type: 5 } } } }],
      ["fields an array", { name, provisioner: { actions: { install: { type: "chef-solo", fields: ["run_list"] } } } }],
      ["dependencies a string", { ...sample.services(name), dependencies: "base" }],
      ["provides an object", { ...sample.services(name), dependencies: { provides: { a: 1 } } }],
    ],
    clustertemplates: [
      ["{}", {}],
      ["only a name", { name }],
      ["compatibility an array", { ...sample.clustertemplates(name), compatibility: [] }],
      ["compatibility.services a string", { ...sample.clustertemplates(name), compatibility: { services: "base" } }],
      ["defaults a string", { ...sample.clustertemplates(name), defaults: "x" }],
      [
        "defaults.services a string",
        { ...sample.clustertemplates(name), defaults: { services: "base", provider: "p", config: {} } },
      ],
      [
        "defaults.config an array",
        { ...sample.clustertemplates(name), defaults: { services: [], provider: "p", config: [] } },
      ],
      [
        "defaults.provider a number",
        { ...sample.clustertemplates(name), defaults: { services: [], provider: 1, config: {} } },
      ],
      ["constraints a number", { ...sample.clustertemplates(name), constraints: 5 }],
      ["size a string", { ...sample.clustertemplates(name), constraints: { size: "big" } }],
      ["layout a string", { ...sample.clustertemplates(name), constraints: { layout: "x" } }],
      [
        "mustcoexist of strings",
        { ...sample.clustertemplates(name), constraints: { layout: { mustcoexist: ["a", "b"] } } },
      ],
      ["administration a string", { ...sample.clustertemplates(name), administration: "x" }],
      ["leaseduration a number", { ...sample.clustertemplates(name), administration: { leaseduration: 5 } }],
    ],
  };
  return [...common, ...(byKind[e.kind!] ?? [])];
}

test.serial(
  "bad input - missing fields and fields of the wrong type are 400 on every endpoint that takes a body",
  async (t) => {
    await unchanged(t, async () => {
      for (const e of withBody(t)) {
        for (const [what, body] of badBodies(t, e)) {
          assertError(t, await send(t, e, { ...allowed(t, e), body }), 400, label(e, what));
        }
      }
    });
  },
);

test.serial("bad input - numbers JSON cannot hold exactly are 400", async (t) => {
  const tenantName = uniqueName("num");
  const raws: Array<[string, string, string]> = [
    ["POST", "/tenants", `{"tenant":{"name":"${tenantName}","workers":1e400}}`],
    ["POST", "/tenants", `{"tenant":{"name":"${tenantName}","workers":9007199254740993}}`],
    ["POST", "/tenants", `{"tenant":{"name":"${tenantName}","workers":0,"extra":-1e999}}`],
    [
      "POST",
      "/clustertemplates",
      JSON.stringify(sample.clustertemplates(uniqueName("t"))).replace('"max":10}', '"max":1e400}'),
    ],
    ["POST", "/providers", `{"name":"${uniqueName("p")}","providertype":"aws","provisioner":{"n":1e400}}`],
  ];
  await unchanged(t, async () => {
    for (const [method, path, rawBody] of raws) {
      const caller = path === "/tenants" ? SUPERADMIN : t.context.tenant.admin;
      const res = await api(t.context.sys.baseUrl, method, path, { ...caller, rawBody });
      assertError(t, res, 400, `${method} ${path} ${rawBody.slice(0, 80)}`);
    }
  });
});

test.serial("bad input - deeply nested JSON is 400, never a 500", async (t) => {
  // Pins: JSON.parse takes any depth, but the gateway's msgpack encode recurses per level (RangeError -> 500).
  const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
  await unchanged(t, async () => {
    for (const depth of [100, 20_000]) {
      const cases: Array<[string, string, string]> = [
        ["POST", "/tenants", `{"tenant":{"name":"${uniqueName("deep")}","workers":0,"x":${deep(depth)}}}`],
        [
          "POST",
          "/providers",
          `{"name":"${uniqueName("deep")}","providertype":"aws","provisioner":{"x":${deep(depth)}}}`,
        ],
        ["POST", "/import", `{"providers":${deep(depth)}}`],
        ["POST", "/hardwaretypes", deep(depth)],
      ];
      for (const [method, path, rawBody] of cases) {
        const caller = path === "/tenants" ? SUPERADMIN : t.context.tenant.admin;
        const res = await api(t.context.sys.baseUrl, method, path, { ...caller, rawBody });
        assertError(t, res, 400, `${method} ${path} nested ${depth} deep`);
      }
    }
  });
});

// -------------------------------------------------------------------------------------------------------------
// Names and paths

test.serial("bad input - invalid names in the body are 400 on every create", async (t) => {
  const names: unknown[] = ["", "bad name", "a/b", "ümlaut", "a*", "a>b", "a\nb", "x".repeat(256), "😀"];
  await unchanged(t, async () => {
    for (const e of withBody(t).filter((x) => x.method === "POST" && x.path !== "/import")) {
      for (const name of names) {
        const body = e.path === "/tenants" ? { tenant: { name, workers: 0 } } : { ...sample[e.kind!]("x"), name };
        assertError(t, await send(t, e, { ...allowed(t, e), body }), 400, label(e, `name ${JSON.stringify(name)}`));
      }
      const imported = { [e.kind ?? "providers"]: [{ ...sample[e.kind ?? "providers"]("x"), name: "bad name" }] };
      const imp = await api(t.context.sys.baseUrl, "POST", "/import", { ...t.context.tenant.admin, body: imported });
      assertError(t, imp, 400, `import of ${e.kind ?? "providers"} named "bad name"`);
    }
  });
});

test.serial("bad input - invalid names in the path are 400", async (t) => {
  const segments = ["bad%20name", "a%2Fb", "%C3%BC", "x".repeat(256), "a*b", "a%00b", "%zz", "%", "a%3Eb"];
  const bases: Array<[string, Caller, (segment: string) => unknown]> = [
    ["/tenants", SUPERADMIN, (segment) => ({ tenant: { name: decodeSafe(segment), workers: 0 } })],
    ...KINDS.map((kind): [string, Caller, (segment: string) => unknown] => [
      `/${kind}`,
      t.context.tenant.admin,
      (segment) => ({ ...changed[kind](EXISTING), name: decodeSafe(segment) }),
    ]),
  ];
  await unchanged(t, async () => {
    for (const [base, caller, body] of bases) {
      for (const segment of segments) {
        for (const method of ["GET", "PUT", "DELETE"]) {
          const res = await api(t.context.sys.baseUrl, method, `${base}/${segment}`, {
            ...caller,
            body: method === "PUT" ? body(segment) : undefined,
          });
          assertError(t, res, 400, `${method} ${base}/${segment}`);
        }
      }
    }
  });
});

function decodeSafe(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

test.serial("bad input - unknown paths are 404", async (t) => {
  const root = t.context.sys.baseUrl.replace(/\/v2$/, "");
  const paths = [
    "/v2/nope",
    "/v2/providers/existing/extra",
    "/v2/tenants/a/b",
    "/v2/provisioners/a/b",
    "/v2/export/all",
    "/v2/import/now",
    "/v2/Providers",
    "/v2/provider",
    "/v2/partialtemplates",
    "/v2/status/x",
    "/v2",
    "/v2/",
    "/V2/providers",
    "/v1/providers",
    "/providers",
    "/",
    "/nope",
    "/v2providers",
  ];
  await unchanged(t, async () => {
    for (const path of paths) {
      for (const method of ["GET", "POST", "PUT", "DELETE", "PATCH"]) {
        if (path === "/" && method === "GET") continue; // the web console's page (test/ui/console.test.ts)
        const body = ["POST", "PUT", "PATCH"].includes(method) ? { name: "x" } : undefined;
        const res = await api(root, method, path, { ...t.context.tenant.admin, body });
        assertError(t, res, 404, `${method} ${path}`);
      }
    }
  });
});

test.serial("bad input - other methods on known paths are 405 with an Allow header", async (t) => {
  const root = t.context.sys.baseUrl.replace(/\/v2$/, "");
  const { tenant } = t.context;
  const cases: Array<[string, string[]]> = [
    ["/v2/status", ["GET"]],
    ["/status", ["GET"]],
    ["/v2/tenants", ["GET", "POST"]],
    [`/v2/tenants/${tenant.name}`, ["GET", "PUT", "DELETE"]],
    ["/v2/provisioners", ["GET"]],
    [`/v2/provisioners/${PROVISIONER.id}`, ["GET"]],
    ...KINDS.flatMap(
      (kind): Array<[string, string[]]> => [
        [`/v2/${kind}`, ["GET", "POST"]],
        [`/v2/${kind}/${EXISTING}`, ["GET", "PUT", "DELETE"]],
      ],
    ),
    ["/v2/export", ["GET"]],
    ["/v2/import", ["POST"]],
  ];
  await unchanged(t, async () => {
    for (const [path, allow] of cases) {
      for (const method of ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
        if (allow.includes(method)) continue;
        const caller = path.includes("tenants") || path.includes("provisioners") ? SUPERADMIN : tenant.admin;
        const body = ["POST", "PUT", "PATCH"].includes(method) ? {} : undefined;
        const res = await api(root, method, path, { ...caller, body });
        if (!assertError(t, res, 405, `${method} ${path}`)) continue;
        const header = (res.headers.get("allow") ?? "")
          .split(",")
          .map((m) => m.trim())
          .filter(Boolean);
        t.deepEqual(header.sort(), [...allow].sort(), `Allow of ${method} ${path}`);
      }
    }
  });
});

// -------------------------------------------------------------------------------------------------------------
// Size limits, and requests that must not disturb others (their own systems)

test.serial("bad input - bodies over the limit are 413 JSON on every endpoint and store nothing", async (t) => {
  const limit = 1024;
  const sys = await startSystem({ maxRequestBytes: limit });
  try {
    await registerFixturePluginTypes(sys.nc);
    const tenant = await createTenant(sys.baseUrl, "small");
    for (const kind of KINDS) {
      assertOk(t, await api(sys.baseUrl, "POST", `/${kind}`, { ...tenant.admin, body: sample[kind](EXISTING) }), kind);
    }
    const state = async () => ({
      tenants: (await api(sys.baseUrl, "GET", "/tenants", SUPERADMIN)).body,
      catalog: (await api(sys.baseUrl, "GET", "/export", tenant.admin)).body,
    });
    const before = await state();
    const padding = "x".repeat(2 * limit);
    const big: Array<[string, string, Caller, unknown]> = [
      ["POST", "/tenants", SUPERADMIN, { tenant: { name: uniqueName("big"), workers: 0, description: padding } }],
      [
        "PUT",
        `/tenants/${tenant.name}`,
        SUPERADMIN,
        { tenant: { name: tenant.name, workers: 0, description: padding } },
      ],
      ...KINDS.flatMap(
        (kind): Array<[string, string, Caller, unknown]> => [
          ["POST", `/${kind}`, tenant.admin, { ...sample[kind](uniqueName("big")), description: padding }],
          ["PUT", `/${kind}/${EXISTING}`, tenant.admin, { ...changed[kind](EXISTING), description: padding }],
        ],
      ),
      ["POST", "/import", tenant.admin, { providers: [{ ...sample.providers("big"), description: padding }] }],
    ];
    for (const [method, path, caller, body] of big) {
      assertError(t, await api(sys.baseUrl, method, path, { ...caller, body }), 413, `${method} ${path}`);
      // The same without Content-Length (chunked): the limit holds while reading.
      const chunked = await sendChunked(sys.baseUrl + path, method, caller, JSON.stringify(body));
      assertError(t, chunked, 413, `${method} ${path} chunked`);
    }
    t.deepEqual(await state(), before, "state unchanged");

    // Just under the limit is fine.
    const fits = { ...sample.hardwaretypes(uniqueName("fits")), description: "" };
    fits["description"] = "y".repeat(limit - 16 - JSON.stringify(fits).length);
    t.true(JSON.stringify(fits).length <= limit);
    assertOk(
      t,
      await api(sys.baseUrl, "POST", "/hardwaretypes", { ...tenant.admin, body: fits }),
      "a body under the limit",
    );
  } finally {
    await sys.stop();
  }
});

/** Sends a body as a stream, so there is no Content-Length and the server sees it in chunks. */
async function sendChunked(url: string, method: string, caller: Caller, text: string) {
  const bytes = new TextEncoder().encode(text);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 256) controller.enqueue(bytes.slice(i, i + 256));
      controller.close();
    },
  });
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (caller.user !== undefined) headers["Service-UserID"] = caller.user;
  if (caller.tenant !== undefined) headers["Service-TenantID"] = caller.tenant;
  const res = await fetch(url, { method, headers, body: stream, duplex: "half" } as RequestInit);
  const resText = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(resText);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text: resText };
}

test.serial("bad input - overlong identifiers are 4xx and do not disturb concurrent requests", async (t) => {
  // Pins: an escaped KV key past nats-server's max_control_line (4096) makes the server close the connection of
  // whoever looked it up (gateway: tenant header; tenancy: provisioner id), failing every request in flight.
  const sys = await startSystem({ requestTimeoutMs: 4000 });
  try {
    const tenant = await createTenant(sys.baseUrl, "calm");
    await registerProvisioner(sys.nc, PROVISIONER);
    const healthy = () =>
      Promise.all([
        ...Array.from({ length: 5 }, () => api(sys.baseUrl, "GET", "/providers", tenant.admin)),
        ...Array.from({ length: 5 }, () => api(sys.baseUrl, "GET", `/tenants/${tenant.name}`, SUPERADMIN)),
      ]);
    const cases: Array<[string, string, Caller, number | "4xx"]> = [
      ["an overlong tenant header", "/providers", { user: "admin", tenant: ".".repeat(1500) }, 401],
      ["an overlong provisioner id", `/provisioners/${"%2C".repeat(1500)}`, SUPERADMIN, "4xx"],
      ["an overlong entity name", `/providers/${".".repeat(1500)}`, tenant.admin, 400],
      ["an overlong tenant name", `/tenants/${".".repeat(1500)}`, SUPERADMIN, 400],
    ];
    for (const [what, path, caller, status] of cases) {
      const others = healthy();
      assertError(t, await api(sys.baseUrl, "GET", path, caller), status, what);
      const answers = await others;
      t.true(
        answers.every((r) => r.status === 200),
        `concurrent requests during ${what}: ${answers.map((r) => r.status).join(" ")}`,
      );
    }
  } finally {
    await sys.stop();
  }
});
