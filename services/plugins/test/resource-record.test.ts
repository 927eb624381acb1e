/** Resource records and the published active set, pure (domain/resource-record.ts, domain/active-set.ts). */
import test from "ava";
import {
  buildActiveSet,
  metadataOf,
  toSpecView,
  withNewVersion,
  withoutVersions,
  type ResourceRecord,
  type StoredVersion,
} from "@corral/plugins/testing";

const bytes = (object: string) => ({ object, size: 3, format: "file" as const, uploadedAt: 0 });
const v = (version: number, status: StoredVersion["status"]): StoredVersion => ({ version, status, ...bytes(`o${version}`) });

test("resource record - versions count up from 1 and the counter survives deletes", (t) => {
  let record: ResourceRecord | undefined;
  for (const expected of [1, 2, 3]) {
    const added = withNewVersion(record, bytes(`o${expected}`));
    t.is(added.version, expected);
    record = added.record;
  }
  const removed = withoutVersions(record as ResourceRecord, "all");
  t.true(removed.ok);
  if (!removed.ok) return;
  t.deepEqual(removed.record.versions, []);
  t.is(withNewVersion(removed.record, bytes("o4")).version, 4);
});

test("resource record - deleting needs every targeted version inactive", (t) => {
  const record: ResourceRecord = { nextVersion: 4, versions: [v(1, "inactive"), v(2, "staged"), v(3, "recalled")] };
  t.deepEqual(withoutVersions(record, "all"), {
    ok: false,
    reason: "not_inactive",
    versions: [
      { version: 2, status: "staged" },
      { version: 3, status: "recalled" },
    ],
  });
  const one = withoutVersions(record, 1);
  t.true(one.ok && one.record.versions.length === 2 && one.record.nextVersion === 4);
  t.deepEqual(withoutVersions(record, 9), { ok: false, reason: "unknown_version" });
  t.deepEqual(withoutVersions({ nextVersion: 2, versions: [] }, "all"), { ok: false, reason: "no_versions" });
});

test("resource record - metadata is sorted by version and filtered by status", (t) => {
  const record: ResourceRecord = { nextVersion: 4, versions: [v(3, "staged"), v(1, "inactive"), v(2, "inactive")] };
  t.deepEqual(metadataOf("r", record), [
    { name: "r", version: 1, status: "inactive" },
    { name: "r", version: 2, status: "inactive" },
    { name: "r", version: 3, status: "staged" },
  ]);
  t.deepEqual(metadataOf("r", record, "staged"), [{ name: "r", version: 3, status: "staged" }]);
});

test("active set - holds live versions (active, and recalled until sync) with format and file permissions", (t) => {
  const address = (resourceType: string, resource: string) =>
    ({ tenant: "t1", kind: "automatortypes", plugin: "shell", resourceType, resource }) as const;
  const set = buildActiveSet(
    "t1",
    [
      { address: address("scripts", "b.sh"), record: { nextVersion: 3, versions: [v(1, "recalled"), v(2, "staged")] } },
      { address: address("scripts", "a.sh"), record: { nextVersion: 2, versions: [v(1, "active")] } },
      { address: address("scripts", "c.sh"), record: { nextVersion: 2, versions: [v(1, "inactive")] } },
      { address: address("archives", "kit"), record: { nextVersion: 2, versions: [{ ...v(1, "active"), format: "archive" }] } },
    ],
    () => ({ name: "shell", resourceTypes: { scripts: { format: "file", permissions: "0755" }, archives: { format: "archive" } } }),
    7,
    1000,
  );
  t.deepEqual(set, {
    tenant: "t1",
    generation: 7,
    publishedAt: 1000,
    providertypes: {},
    automatortypes: {
      shell: {
        archives: { format: "archive", active: [{ name: "kit", version: 1, object: "o1", size: 3, format: "archive" }] },
        scripts: {
          format: "file",
          permissions: "0755",
          active: [
            { name: "a.sh", version: 1, object: "o1", size: 3, format: "file" },
            { name: "b.sh", version: 1, object: "o1", size: 3, format: "file" },
          ],
        },
      },
    },
  });
});

test("plugin spec view - stored resourceTypes/format become the API's resourcetypes/filetype", (t) => {
  t.deepEqual(toSpecView({ name: "x", resourceTypes: { b: { format: "file", permissions: "0755" }, a: { format: "archive" } } }), {
    name: "x",
    description: "",
    resourcetypes: { a: { filetype: "archive" }, b: { filetype: "file" } },
    parameters: {},
  });
});
