/**
 * Concurrent writes through two gateways and two tenancy instances (docs/architecture.md, State in JetStream:
 * creates use KV create, so exactly one of concurrent creates wins; updates use compare-and-set with retry).
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { api, SUPERADMIN, type ApiResponse, type Caller } from "../helpers/api.js";
import { assertError, assertOk } from "../helpers/assertions.js";
import { changed, createTenant, KINDS, sample, uniqueName } from "../helpers/catalog.js";
import { registerFixturePluginTypes } from "../helpers/registry.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

const test = anyTest as TestFn<{ sys: TestSystem }>;
type T = ExecutionContext<{ sys: TestSystem }>;

/** Concurrent creates of one name. */
const WRITERS = 20;
/**
 * Concurrent PUTs of one entity. Every one must succeed (the compare-and-set retry); at 20 writers the
 * bounded retry runs out only now and then, at 60 nearly always, so a lost PUT shows every run rather than by chance.
 * Pins: `modifyValue` (shared/src/kv.ts) gives up after 10 attempts with a 503 `contention`.
 */
const PUT_WRITERS = 60;

test.before(async (t) => {
  t.context.sys = await startSystem({ gateways: 2, tenancies: 2 });
  await registerFixturePluginTypes(t.context.sys.nc);
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
});

/** Sends `count` requests at once, alternating between the gateways; request i carries body(i). */
function fire(t: T, method: string, path: string, caller: Caller, body: (i: number) => unknown, count = WRITERS) {
  const urls = t.context.sys.baseUrls;
  t.is(urls.length, 2, "two gateways");
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      api(urls[i % urls.length] ?? "", method, path, { ...caller, body: body(i) }),
    ),
  );
}

/** Exactly one answer is a 200; every other is an error with `loserStatus`. Returns the winner's index. */
function oneWinner(t: T, answers: ApiResponse[], loserStatus: number): number {
  const winners = answers.flatMap((r, i) => (r.status === 200 ? [i] : []));
  t.is(winners.length, 1, `exactly one 200: ${answers.map((r) => r.status).join(" ")}`);
  answers.forEach((r, i) => {
    if (r.status !== 200) assertError(t, r, loserStatus, `writer ${i}`);
  });
  return winners[0] ?? -1;
}

test("concurrency - 20 concurrent creates of one tenant name: one 200, the rest 409, the winner's tenant is stored", async (t) => {
  const name = uniqueName("race");
  const body = (i: number) => ({ tenant: { name, workers: i, description: `writer ${i}` } });
  const answers = await fire(t, "POST", "/tenants", SUPERADMIN, body);
  const winner = oneWinner(t, answers, 409);
  if (winner < 0) return;
  const expected = body(winner).tenant;
  t.deepEqual(answers[winner]?.body, expected, "the winner's answer is its tenant");
  for (const url of t.context.sys.baseUrls) {
    t.deepEqual((await api(url, "GET", `/tenants/${name}`, SUPERADMIN)).body, expected, `stored, read via ${url}`);
  }
  const listed = (
    (await api(t.context.sys.baseUrl, "GET", "/tenants", SUPERADMIN)).body as Array<{ name: string }>
  ).filter((x) => x.name === name);
  t.deepEqual(listed, [expected], "listed once");
});

for (const kind of KINDS) {
  test(`concurrency - 20 concurrent creates of one ${kind} name: one 200, the rest 400, the winner's entity is stored`, async (t) => {
    const tenant = await createTenant(t.context.sys.baseUrl, "race");
    const name = uniqueName("race");
    const body = (i: number) => ({ ...sample[kind](name), description: `writer ${i}` });
    const answers = await fire(t, "POST", `/${kind}`, tenant.admin, body);
    const winner = oneWinner(t, answers, 400);
    if (winner < 0) return;
    t.deepEqual(answers[winner]?.body, body(winner), "the winner's answer is its entity");
    for (const url of t.context.sys.baseUrls) {
      t.deepEqual((await api(url, "GET", `/${kind}/${name}`, tenant.user)).body, body(winner), `get via ${url}`);
      t.deepEqual((await api(url, "GET", `/${kind}`, tenant.user)).body, [body(winner)], `list via ${url}`);
    }
  });
}

test("concurrency - 60 concurrent PUTs to one provider all succeed and the final state is one of them", async (t) => {
  const tenant = await createTenant(t.context.sys.baseUrl, "puts");
  const name = uniqueName("p");
  assertOk(
    t,
    await api(t.context.sys.baseUrl, "POST", "/providers", { ...tenant.admin, body: sample.providers(name) }),
    "create",
  );
  const body = (i: number) => ({
    ...changed.providers(name),
    description: `writer ${i}`,
    provisioner: { writer: String(i) },
  });
  const answers = await fire(t, "PUT", `/providers/${name}`, tenant.admin, body, PUT_WRITERS);
  answers.forEach((r, i) => {
    if (assertOk(t, r, `writer ${i}`)) t.deepEqual(r.body, body(i), `writer ${i} gets its own object`);
  });
  const stored = (await api(t.context.sys.baseUrl, "GET", `/providers/${name}`, tenant.admin)).body;
  const candidates = Array.from({ length: PUT_WRITERS }, (_, i) => body(i));
  t.true(
    candidates.some((c) => JSON.stringify(c) === JSON.stringify(stored)),
    `stored is one of the PUTs: ${JSON.stringify(stored)}`,
  );
  for (const url of t.context.sys.baseUrls) {
    t.deepEqual((await api(url, "GET", `/providers/${name}`, tenant.user)).body, stored, `same via ${url}`);
  }
});

test("concurrency - 60 concurrent PUTs of partial provider bodies keep the untouched fields", async (t) => {
  const tenant = await createTenant(t.context.sys.baseUrl, "partial");
  const name = uniqueName("p");
  const original = sample.providers(name);
  assertOk(t, await api(t.context.sys.baseUrl, "POST", "/providers", { ...tenant.admin, body: original }), "create");
  const answers = await fire(
    t,
    "PUT",
    `/providers/${name}`,
    tenant.admin,
    (i) => ({ name, description: `writer ${i}` }),
    PUT_WRITERS,
  );
  answers.forEach((r, i) => assertOk(t, r, `writer ${i}`));
  const stored = (await api(t.context.sys.baseUrl, "GET", `/providers/${name}`, tenant.admin)).body;
  t.true(/^writer \d+$/.test(stored?.description), `description from one writer: ${JSON.stringify(stored)}`);
  t.deepEqual({ ...stored, description: undefined }, { ...original, description: undefined }, "other fields kept");
});

test("concurrency - 60 concurrent PUTs to one tenant all succeed and the final state is one of them", async (t) => {
  const { name } = await createTenant(t.context.sys.baseUrl, "tputs");
  const body = (i: number) => ({ tenant: { name, workers: i, maxNodes: 100 + i, note: `writer ${i}` } });
  const answers = await fire(t, "PUT", `/tenants/${name}`, SUPERADMIN, body, PUT_WRITERS);
  answers.forEach((r, i) => {
    if (assertOk(t, r, `writer ${i}`)) t.deepEqual(r.body, body(i).tenant);
  });
  const stored = (await api(t.context.sys.baseUrl, "GET", `/tenants/${name}`, SUPERADMIN)).body;
  const candidates = Array.from({ length: PUT_WRITERS }, (_, i) => body(i).tenant);
  t.true(
    candidates.some((c) => JSON.stringify(c) === JSON.stringify(stored)),
    `stored is one of the PUTs: ${JSON.stringify(stored)}`,
  );
});

test("concurrency - concurrent imports and reads never show a half-replaced catalog", async (t) => {
  const tenant = await createTenant(t.context.sys.baseUrl, "imports");
  const catalogOf = (i: number) => ({
    providers: [sample.providers(`p-${i}-a`), sample.providers(`p-${i}-b`)],
    hardwaretypes: [sample.hardwaretypes(`hw-${i}`)],
    imagetypes: [],
    services: [sample.services(`svc-${i}`)],
    clustertemplates: [],
  });
  const answers = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      api(t.context.sys.baseUrls[i % 2] ?? "", "POST", "/import", { ...tenant.admin, body: catalogOf(i) }),
    ),
  );
  // A second import while one runs may be refused with 409 (docs/api.md); none may fail otherwise.
  answers.forEach((r, i) => {
    if (r.status !== 200) assertError(t, r, 409, `import ${i}`);
  });
  const accepted = answers.flatMap((r, i) => (r.status === 200 ? [i] : []));
  t.true(accepted.length >= 1, "at least one import accepted");
  const exported = (await api(t.context.sys.baseUrl, "GET", "/export", tenant.admin)).body;
  const matches = accepted.filter((i) => JSON.stringify(catalogOf(i)) === JSON.stringify(exported));
  t.is(matches.length, 1, `the catalog is exactly one accepted import: ${JSON.stringify(exported)}`);
});
