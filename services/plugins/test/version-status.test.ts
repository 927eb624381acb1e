/** The plugin resource version machine (services/plugins/README.md, Version statuses), pure. */
import test from "ava";
import fc from "fast-check";
import { RESOURCE_STATUSES, type ResourceStatus } from "@corral/contracts";
import { isLive, transition, type VersionEvent } from "@corral/plugins/testing";

type V = { version: number; status: ResourceStatus };

/** The version table, row by row: from, trigger, to. */
const TABLE: Array<[ResourceStatus, "stage" | "recall" | "sync", ResourceStatus]> = [
  ["inactive", "stage", "staged"],
  ["staged", "stage", "staged"],
  ["active", "stage", "active"],
  ["recalled", "stage", "active"],
  ["active", "recall", "recalled"],
  ["staged", "recall", "inactive"],
  ["inactive", "recall", "inactive"],
  ["recalled", "recall", "recalled"],
  ["staged", "sync", "active"],
  ["recalled", "sync", "inactive"], // "state after removal not shown": Coopr's inactive
];

const eventOf = (trigger: "stage" | "recall" | "sync", version: number): VersionEvent =>
  trigger === "sync" ? { type: "resource.sync" } : { type: `version.${trigger}`, version };

for (const [from, trigger, to] of TABLE) {
  test(`version status - ${from} --${trigger}--> ${to}`, (t) => {
    const result = transition<V>([{ version: 1, status: from }], eventOf(trigger, 1));
    t.true(result.ok);
    if (result.ok) {
      t.deepEqual(result.versions, [{ version: 1, status: to }]);
      t.is(result.changed, from !== to, "changed says whether anything moved");
    }
  });
}

test("version status - sync leaves inactive and active versions alone", (t) => {
  const result = transition<V>([{ version: 1, status: "inactive" }, { version: 2, status: "active" }], { type: "resource.sync" });
  t.deepEqual(result, { ok: true, changed: false, versions: [{ version: 1, status: "inactive" }, { version: 2, status: "active" }] });
});

test("version status - staging a version un-stages the others: staged -> inactive, active -> recalled", (t) => {
  const versions: V[] = [
    { version: 1, status: "active" },
    { version: 2, status: "staged" },
    { version: 3, status: "inactive" },
    { version: 4, status: "recalled" },
  ];
  const staged = transition(versions, { type: "version.stage", version: 3 });
  t.deepEqual(staged.ok && staged.versions, [
    { version: 1, status: "recalled" },
    { version: 2, status: "inactive" },
    { version: 3, status: "staged" },
    { version: 4, status: "recalled" },
  ]);
  t.deepEqual(versions[0], { version: 1, status: "active" }, "the input is not mutated");
});

test("version status - recall touches only the targeted version", (t) => {
  const result = transition<V>([{ version: 1, status: "active" }, { version: 2, status: "staged" }], { type: "version.recall", version: 1 });
  t.deepEqual(result.ok && result.versions, [{ version: 1, status: "recalled" }, { version: 2, status: "staged" }]);
});

test("version status - stage and recall of an unknown version fail", (t) => {
  t.deepEqual(transition<V>([{ version: 1, status: "inactive" }], { type: "version.stage", version: 2 }), { ok: false, reason: "unknown_version" });
  t.deepEqual(transition<V>([], { type: "version.recall", version: 1 }), { ok: false, reason: "unknown_version" });
});

test("version status - extra fields of a version are kept", (t) => {
  const result = transition([{ version: 1, status: "inactive" as ResourceStatus, object: "o1" }], { type: "version.stage", version: 1 });
  t.deepEqual(result.ok && result.versions, [{ version: 1, status: "staged", object: "o1" }]);
});

const slated = (s: ResourceStatus) => s === "staged" || s === "active";

test("version status - any sequence keeps at most one version slated, and at most one live after a sync", (t) => {
  const event = fc.oneof(
    fc.record({ type: fc.constantFrom("version.stage" as const, "version.recall" as const), version: fc.integer({ min: 1, max: 4 }) }),
    fc.constant({ type: "resource.sync" as const }),
  );
  fc.assert(
    fc.property(fc.array(event, { maxLength: 40 }), (events) => {
      let versions: V[] = [1, 2, 3, 4].map((version) => ({ version, status: "inactive" }));
      for (const e of events) {
        const r = transition(versions, e);
        if (!r.ok) return false;
        versions = r.versions;
        if (versions.filter((v) => slated(v.status)).length > 1) return false;
        if (e.type === "resource.sync" && versions.filter((v) => isLive(v.status)).length > 1) return false;
        if (e.type === "resource.sync" && versions.some((v) => v.status === "staged" || v.status === "recalled")) return false;
      }
      return true;
    }),
  );
  t.pass();
});

test("version status - every status is covered by the table for stage and recall", (t) => {
  for (const s of RESOURCE_STATUSES) {
    for (const trigger of ["stage", "recall"] as const) t.true(TABLE.some(([from, tr]) => from === s && tr === trigger), `${s} ${trigger}`);
  }
});
