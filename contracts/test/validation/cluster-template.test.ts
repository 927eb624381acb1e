import test from "ava";
import { parseClusterTemplate } from "../../src/validation/index.js";
import { throws400 } from "./helpers.js";

/** A valid minimal template body, with `extra` merged on top. */
function template(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "t",
    compatibility: { services: ["a", "b", "c"] },
    defaults: { services: ["a"], provider: "digitalocean", config: {} },
    ...extra,
  };
}

function withDefaults(defaults: Record<string, unknown>): Record<string, unknown> {
  return template({ defaults: { services: ["a"], provider: "digitalocean", config: {}, ...defaults } });
}

test("template - a full template parses to its canonical form", (t) => {
  const body = {
    name: "k8s",
    description: "Kubernetes cluster",
    version: 1,
    defaults: {
      services: ["hosts-1.0", "kube-apiserver", "kubelet"],
      provider: "digitalocean",
      hardwaretype: "large",
      imagetype: "debian12",
      dnsSuffix: "example.com",
      config: {},
    },
    compatibility: { hardwaretypes: [], imagetypes: [], services: ["hosts-1.0", "kube-apiserver", "kubelet"] },
    constraints: {
      layout: { mustcoexist: [], cantcoexist: [["kube-apiserver", "kubelet"]] },
      services: {
        "kube-apiserver": { hardwaretypes: ["large"], imagetypes: ["debian12", "ubuntu24"], quantities: { min: 1, max: 1 } },
      },
      size: { min: 1, max: 2147483647 },
    },
    administration: { leaseduration: { initial: 0, max: 0, step: 0 } },
    links: [],
    extends: { name: "parent-template" },
    includes: [{ name: "partial1" }],
  };
  const parsed = parseClusterTemplate(body);
  t.deepEqual(parsed, {
    name: "k8s",
    description: "Kubernetes cluster",
    compatibility: body.compatibility,
    defaults: body.defaults,
    constraints: body.constraints,
    administration: body.administration,
  });
  t.deepEqual(Object.keys(parsed), [
    "name",
    "description",
    "compatibility",
    "defaults",
    "constraints",
    "administration",
  ]);
  t.deepEqual(Object.keys(parsed.defaults), [
    "services",
    "provider",
    "config",
    "hardwaretype",
    "imagetype",
    "dnsSuffix",
  ]);
  t.deepEqual(Object.keys(parsed.constraints ?? {}), ["size", "layout", "services"]);
  t.not(parsed.compatibility, body.compatibility);
  t.not(parsed.defaults.config, body.defaults.config);
  t.not(parsed.constraints?.layout, body.constraints.layout);
});

test("template - the minimal template: compatibility lists filled, optional levels not invented", (t) => {
  const parsed = parseClusterTemplate(template({ compatibility: {} }));
  t.deepEqual(parsed, {
    name: "t",
    compatibility: { hardwaretypes: [], imagetypes: [], services: [] },
    defaults: { services: ["a"], provider: "digitalocean", config: {} },
  });
  t.false("constraints" in parsed);
  t.false("administration" in parsed);
  t.deepEqual(
    parseClusterTemplate(template({ constraints: null, administration: null })),
    parseClusterTemplate(template()),
  );
});

test("template - required sections", (t) => {
  throws400(t, () => parseClusterTemplate(null), "body must be a JSON object", "body");
  throws400(t, () => parseClusterTemplate(template({ name: undefined })), "name is required", "name");
  throws400(
    t,
    () => parseClusterTemplate(template({ compatibility: undefined })),
    "compatibility is required",
    "compatibility",
  );
  throws400(
    t,
    () => parseClusterTemplate(template({ compatibility: [] })),
    "compatibility must be an object (got an array)",
    "compatibility",
  );
  throws400(t, () => parseClusterTemplate(template({ defaults: undefined })), "defaults is required", "defaults");
  throws400(
    t,
    () => parseClusterTemplate(withDefaults({ services: undefined })),
    "defaults.services is required",
    "defaults.services",
  );
  throws400(
    t,
    () => parseClusterTemplate(withDefaults({ provider: undefined })),
    "defaults.provider is required",
    "defaults.provider",
  );
  throws400(
    t,
    () => parseClusterTemplate(withDefaults({ config: undefined })),
    "defaults.config is required",
    "defaults.config",
  );
  throws400(
    t,
    () => parseClusterTemplate(withDefaults({ config: "x" })),
    `defaults.config must be an object (got "x")`,
    "defaults.config",
  );
  throws400(
    t,
    () => parseClusterTemplate(template({ compatibility: { imagetypes: ["ok", "not ok"] } })),
    `compatibility.imagetypes[1] must contain only letters, digits, '.', '_' and '-' (got "not ok")`,
    "compatibility.imagetypes[1]",
  );
});

test("template - defaults.config is copied as any JSON object", (t) => {
  const config = { kubernetes: { apiserver: { etcd_servers: "https://%host.service.etcd%:2379" } }, n: [1, null, true] };
  const parsed = parseClusterTemplate(withDefaults({ config }));
  t.deepEqual(parsed.defaults.config, config);
  t.not(parsed.defaults.config["kubernetes"], config.kubernetes);
});

test("template - defaults.services must be a subset of a non-empty compatibility.services", (t) => {
  throws400(
    t,
    () => parseClusterTemplate(withDefaults({ services: ["a", "z"] })),
    `defaults.services must be a subset of compatibility.services ("z" is not listed)`,
    "defaults.services",
  );
  const open = parseClusterTemplate(
    template({ compatibility: { services: [] }, defaults: { services: ["z"], provider: "p", config: {} } }),
  );
  t.deepEqual(open.defaults.services, ["z"]);
  t.deepEqual(parseClusterTemplate(withDefaults({ services: [] })).defaults.services, []);
});

test("template - defaults.hardwaretype and imagetype must be in a non-empty compatibility list", (t) => {
  const body = template({
    compatibility: { hardwaretypes: ["small"], imagetypes: [], services: ["a"] },
    defaults: { services: ["a"], provider: "p", config: {}, hardwaretype: "small", imagetype: "anything" },
  });
  const parsed = parseClusterTemplate(body);
  t.is(parsed.defaults.hardwaretype, "small");
  t.is(parsed.defaults.imagetype, "anything");
  throws400(
    t,
    () =>
      parseClusterTemplate(
        template({
          compatibility: { hardwaretypes: ["small"] },
          defaults: { services: [], provider: "p", config: {}, hardwaretype: "large" },
        }),
      ),
    `defaults.hardwaretype must be one of compatibility.hardwaretypes (got "large")`,
    "defaults.hardwaretype",
  );
  throws400(
    t,
    () =>
      parseClusterTemplate(
        template({
          compatibility: { imagetypes: ["debian12"] },
          defaults: { services: [], provider: "p", config: {}, imagetype: "ubuntu24" },
        }),
      ),
    `defaults.imagetype must be one of compatibility.imagetypes (got "ubuntu24")`,
    "defaults.imagetype",
  );
  throws400(
    t,
    () => parseClusterTemplate(withDefaults({ hardwaretype: 3 })),
    "defaults.hardwaretype must be a string (got 3)",
    "defaults.hardwaretype",
  );
  t.false("hardwaretype" in parseClusterTemplate(withDefaults({ hardwaretype: null })).defaults);
});

test("template - dnsSuffix must be a valid DNS suffix", (t) => {
  for (const ok of ["local", "example.com", "a-b.c0.EXAMPLE.org", "x", `${"a".repeat(63)}.com`, "123.45"]) {
    t.is(parseClusterTemplate(withDefaults({ dnsSuffix: ok })).defaults.dnsSuffix, ok, ok);
  }
  const rule = "labels are 1-63 letters, digits or '-', not starting or ending with '-'";
  const cases: [string, string][] = [
    ["", "an empty label"],
    ["example.com.", "an empty label"],
    [".example.com", "an empty label"],
    ["a..b", "an empty label"],
    ["-a.com", `label "-a"`],
    ["a-.com", `label "a-"`],
    ["a_b.com", `label "a_b"`],
    ["a b", `label "a b"`],
    [`${"a".repeat(64)}.com`, `label "${"a".repeat(64)}"`],
  ];
  for (const [bad, why] of cases) {
    throws400(
      t,
      () => parseClusterTemplate(withDefaults({ dnsSuffix: bad })),
      `defaults.dnsSuffix must be a DNS suffix such as "example.com": ${rule} (${why})`,
      "defaults.dnsSuffix",
    );
  }
  const long = Array.from({ length: 51 }, () => "abcd").join("."); // 254 characters
  throws400(
    t,
    () => parseClusterTemplate(withDefaults({ dnsSuffix: long })),
    `defaults.dnsSuffix must be a DNS suffix such as "example.com" (at most 253 characters, got 254)`,
    "defaults.dnsSuffix",
  );
  throws400(
    t,
    () => parseClusterTemplate(withDefaults({ dnsSuffix: 1 })),
    "defaults.dnsSuffix must be a string (got 1)",
    "defaults.dnsSuffix",
  );
});

test("template - constraints.size: numeric strings, only given members kept", (t) => {
  t.deepEqual(parseClusterTemplate(template({ constraints: { size: { min: "3" } } })).constraints, {
    size: { min: 3 },
  });
  t.deepEqual(parseClusterTemplate(template({ constraints: { size: { max: "5" } } })).constraints, {
    size: { max: 5 },
  });
  t.deepEqual(parseClusterTemplate(template({ constraints: { size: { min: 2, max: "2" } } })).constraints, {
    size: { min: 2, max: 2 },
  });
  t.deepEqual(parseClusterTemplate(template({ constraints: { size: {} } })).constraints, { size: {} });
  t.deepEqual(parseClusterTemplate(template({ constraints: {} })).constraints, {});
});

test("template - constraints.size errors", (t) => {
  const size = (s: unknown): Record<string, unknown> => template({ constraints: { size: s } });
  throws400(
    t,
    () => parseClusterTemplate(size({ min: 3, max: 2 })),
    "constraints.size.max must be >= size.min (3)",
    "constraints.size.max",
  );
  throws400(
    t,
    () => parseClusterTemplate(size({ min: "3", max: "2" })),
    "constraints.size.max must be >= size.min (3)",
    "constraints.size.max",
  );
  throws400(
    t,
    () => parseClusterTemplate(size({ max: 0 })),
    "constraints.size.max must be >= size.min (1)",
    "constraints.size.max",
  );
  throws400(
    t,
    () => parseClusterTemplate(size({ min: 0 })),
    "constraints.size.min must be >= 1 (got 0)",
    "constraints.size.min",
  );
  throws400(
    t,
    () => parseClusterTemplate(size({ min: "3.5" })),
    `constraints.size.min must be an integer (got "3.5")`,
    "constraints.size.min",
  );
  throws400(
    t,
    () => parseClusterTemplate(size({ max: "many" })),
    `constraints.size.max must be an integer (got "many")`,
    "constraints.size.max",
  );
  throws400(
    t,
    () => parseClusterTemplate(size({ max: -1 })),
    "constraints.size.max must be >= 0 (got -1)",
    "constraints.size.max",
  );
  throws400(t, () => parseClusterTemplate(size(3)), "constraints.size must be an object (got 3)", "constraints.size");
  throws400(
    t,
    () => parseClusterTemplate(template({ constraints: "x" })),
    `constraints must be an object (got "x")`,
    "constraints",
  );
});

test("template - constraints.layout", (t) => {
  const layout = { mustcoexist: [["a", "b", "a"], ["c"]], cantcoexist: [["a", "c"]] };
  t.deepEqual(parseClusterTemplate(template({ constraints: { layout } })).constraints, {
    layout: { mustcoexist: [["a", "b", "a"], ["c"]], cantcoexist: [["a", "c"]] },
  });
  t.deepEqual(parseClusterTemplate(template({ constraints: { layout: { cantcoexist: [] } } })).constraints, {
    layout: { cantcoexist: [] },
  });
  const bad = (l: unknown): Record<string, unknown> => template({ constraints: { layout: l } });
  throws400(
    t,
    () => parseClusterTemplate(bad({ cantcoexist: [["a"]] })),
    "constraints.layout.cantcoexist[0] must name at least 2 distinct services (got 1)",
    "constraints.layout.cantcoexist[0]",
  );
  throws400(
    t,
    () =>
      parseClusterTemplate(
        bad({
          cantcoexist: [
            ["a", "b"],
            ["c", "c"],
          ],
        }),
      ),
    "constraints.layout.cantcoexist[1] must name at least 2 distinct services (got 1)",
    "constraints.layout.cantcoexist[1]",
  );
  throws400(
    t,
    () => parseClusterTemplate(bad({ mustcoexist: [[]] })),
    "constraints.layout.mustcoexist[0] must name at least 1 distinct service (got 0)",
    "constraints.layout.mustcoexist[0]",
  );
  throws400(
    t,
    () => parseClusterTemplate(bad({ mustcoexist: ["a", "b"] })),
    `constraints.layout.mustcoexist[0] must be an array of names (got "a")`,
    "constraints.layout.mustcoexist[0]",
  );
  throws400(
    t,
    () => parseClusterTemplate(bad({ mustcoexist: { a: ["b"] } })),
    "constraints.layout.mustcoexist must be an array of arrays of names (got an object)",
    "constraints.layout.mustcoexist",
  );
  throws400(
    t,
    () => parseClusterTemplate(bad({ mustcoexist: [["a", "b c"]] })),
    `constraints.layout.mustcoexist[0][1] must contain only letters, digits, '.', '_' and '-' (got "b c")`,
    "constraints.layout.mustcoexist[0][1]",
  );
});

test("template - constraints.services", (t) => {
  const services = {
    etcd: { hardwaretypes: ["large"], quantities: { min: "1", max: "1" } },
    kubelet: { quantities: { min: 2 } },
    redis: { quantities: { max: "0" } },
    any: {},
  };
  t.deepEqual(parseClusterTemplate(template({ constraints: { services } })).constraints, {
    services: {
      etcd: { hardwaretypes: ["large"], quantities: { min: 1, max: 1 } },
      kubelet: { quantities: { min: 2 } },
      redis: { quantities: { max: 0 } },
      any: {},
    },
  });
  const bad = (s: unknown): Record<string, unknown> => template({ constraints: { services: s } });
  throws400(
    t,
    () => parseClusterTemplate(bad({ etcd: { quantities: { min: 2, max: 1 } } })),
    "constraints.services.etcd.quantities.max must be >= quantities.min (2)",
    "constraints.services.etcd.quantities.max",
  );
  throws400(
    t,
    () => parseClusterTemplate(bad({ etcd: { quantities: { min: -1 } } })),
    "constraints.services.etcd.quantities.min must be >= 0 (got -1)",
    "constraints.services.etcd.quantities.min",
  );
  throws400(
    t,
    () => parseClusterTemplate(bad({ etcd: { quantities: { max: "x" } } })),
    `constraints.services.etcd.quantities.max must be an integer (got "x")`,
    "constraints.services.etcd.quantities.max",
  );
  throws400(
    t,
    () => parseClusterTemplate(bad({ etcd: { quantities: 1 } })),
    "constraints.services.etcd.quantities must be an object (got 1)",
    "constraints.services.etcd.quantities",
  );
  throws400(
    t,
    () => parseClusterTemplate(bad({ etcd: { imagetypes: "debian12" } })),
    `constraints.services.etcd.imagetypes must be an array of names (got "debian12")`,
    "constraints.services.etcd.imagetypes",
  );
  throws400(
    t,
    () => parseClusterTemplate(bad({ etcd: [] })),
    "constraints.services.etcd must be an object (got an array)",
    "constraints.services.etcd",
  );
  throws400(
    t,
    () => parseClusterTemplate(bad({ "bad name": {} })),
    `constraints.services key "bad name" must contain only letters, digits, '.', '_' and '-'`,
    "constraints.services",
  );
  throws400(
    t,
    () => parseClusterTemplate(bad([])),
    "constraints.services must be an object (got an array)",
    "constraints.services",
  );
});

test("template - lease durations accept ms, numeric strings and duration strings", (t) => {
  const lease = (l: unknown): unknown =>
    parseClusterTemplate(template({ administration: { leaseduration: l } })).administration?.leaseduration;
  t.deepEqual(lease({ initial: 1000, max: "2000", step: "0" }), { initial: 1000, max: 2000, step: 0 });
  t.deepEqual(lease({ initial: "10s", max: "15m", step: "2h" }), { initial: 10_000, max: 900_000, step: 7_200_000 });
  t.deepEqual(lease({ initial: "1d", max: "0", step: "1s" }), { initial: 86_400_000, max: 0, step: 1000 });
  t.deepEqual(lease({}), { initial: 0, max: 0, step: 0 });
  t.deepEqual(lease({ initial: "5m" }), { initial: 300_000, max: 0, step: 0 });
  t.deepEqual(lease({ initial: null, step: 7 }), { initial: 0, max: 0, step: 7 });
});

test("template - lease duration errors", (t) => {
  const body = (l: unknown): Record<string, unknown> => template({ administration: { leaseduration: l } });
  const durationProblem = 'must be milliseconds or a duration such as "10s", "15m", "2h", "1d"';
  for (const bad of ["1.5s", "10 s", "10w", "ten", "", "s", "1ms", "1S", "1e3"]) {
    throws400(
      t,
      () => parseClusterTemplate(body({ initial: bad })),
      `administration.leaseduration.initial ${durationProblem} (got ${JSON.stringify(bad)})`,
      "administration.leaseduration.initial",
    );
  }
  throws400(
    t,
    () => parseClusterTemplate(body({ step: true })),
    `administration.leaseduration.step ${durationProblem} (got true)`,
    "administration.leaseduration.step",
  );
  throws400(
    t,
    () => parseClusterTemplate(body({ step: -1 })),
    "administration.leaseduration.step must be >= 0 (got -1)",
    "administration.leaseduration.step",
  );
  throws400(
    t,
    () => parseClusterTemplate(body({ step: "-1s" })),
    "administration.leaseduration.step must be >= 0 (got -1000)",
    "administration.leaseduration.step",
  );
  throws400(
    t,
    () => parseClusterTemplate(body({ step: 1.5 })),
    "administration.leaseduration.step must be an integer (got 1.5)",
    "administration.leaseduration.step",
  );
  throws400(
    t,
    () => parseClusterTemplate(body({ max: "999999999999d" })),
    "administration.leaseduration.max must be <= 9007199254740991",
    "administration.leaseduration.max",
  );
  throws400(
    t,
    () => parseClusterTemplate(body([])),
    "administration.leaseduration must be an object (got an array)",
    "administration.leaseduration",
  );
});

test("template - administration without leaseduration is refused", (t) => {
  for (const administration of [{}, { leaseduration: null }, { other: 1 }]) {
    throws400(
      t,
      () => parseClusterTemplate(template({ administration })),
      "administration.leaseduration is required when administration is given",
      "administration.leaseduration",
    );
  }
  throws400(
    t,
    () => parseClusterTemplate(template({ administration: 5 })),
    "administration must be an object (got 5)",
    "administration",
  );
});

test("template - lease rule: 0 is infinity for initial and max, max may not be below initial", (t) => {
  const accepts = (initial: unknown, max: unknown): void => {
    t.notThrows(
      () => parseClusterTemplate(template({ administration: { leaseduration: { initial, max } } })),
      `${String(initial)}/${String(max)}`,
    );
  };
  accepts(0, 0);
  accepts(1000, 0);
  accepts(1000, 1000);
  accepts(1000, 2000);
  accepts("1h", "1d");
  accepts("60s", "1m");
  const rejects = (initial: unknown, max: unknown, message: string): void => {
    throws400(
      t,
      () => parseClusterTemplate(template({ administration: { leaseduration: { initial, max } } })),
      `administration.leaseduration.max ${message}`,
      "administration.leaseduration.max",
    );
  };
  rejects(0, 1000, "must be 0 (unlimited) when initial is 0 (unlimited) (got 1000)");
  rejects(undefined, "1d", "must be 0 (unlimited) when initial is 0 (unlimited) (got 86400000)");
  rejects(2000, 1000, "must be >= initial (2000) or 0 (unlimited) (got 1000)");
  rejects("1d", "1h", "must be >= initial (86400000) or 0 (unlimited) (got 3600000)");
});

test("template - returns a fresh object even for an already canonical body", (t) => {
  const canonical = parseClusterTemplate(template({ constraints: { size: { min: 2 } } }));
  const again = parseClusterTemplate(canonical);
  t.deepEqual(again, canonical);
  t.not(again, canonical);
  t.not(again.defaults, canonical.defaults);
  t.not(again.constraints?.size, canonical.constraints?.size);
});

test("template - administration.repair: optional, auto and afterSeconds >= 1", (t) => {
  const lease = { initial: 0, max: 0, step: 0 };
  const admin = (repair: unknown): Record<string, unknown> => template({ administration: { leaseduration: lease, repair } });
  t.deepEqual(parseClusterTemplate(admin({ auto: true, afterSeconds: 120 })).administration, {
    leaseduration: lease,
    repair: { auto: true, afterSeconds: 120 },
  });
  t.deepEqual(parseClusterTemplate(admin({ auto: "false", afterSeconds: "30" })).administration?.repair, { auto: false, afterSeconds: 30 });
  t.deepEqual(parseClusterTemplate(admin(null)).administration, { leaseduration: lease });
  t.false("repair" in (parseClusterTemplate(template({ administration: { leaseduration: {} } })).administration ?? {}));
  const rejects = (repair: unknown, field: string, problem: string): void =>
    throws400(t, () => parseClusterTemplate(admin(repair)), `administration.repair${field} ${problem}`, `administration.repair${field}`);
  rejects(true, "", "must be an object (got true)");
  rejects({ afterSeconds: 60 }, ".auto", "is required");
  rejects({ auto: "yes", afterSeconds: 60 }, ".auto", `must be a boolean (got "yes")`);
  rejects({ auto: true }, ".afterSeconds", "is required");
  rejects({ auto: true, afterSeconds: 0 }, ".afterSeconds", "must be >= 1 (got 0)");
  rejects({ auto: true, afterSeconds: 1.5 }, ".afterSeconds", "must be an integer (got 1.5)");
  rejects({ auto: true, afterSeconds: "soon" }, ".afterSeconds", `must be an integer (got "soon")`);
});
