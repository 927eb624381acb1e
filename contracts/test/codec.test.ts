import test from "ava";
import fc from "fast-check";
import { decode, encode, withEncodedEntries } from "../src/codec.js";

/**
 * JSON values without a `__proto__` key: msgpackr reads that key back as `__proto_` (its guard against prototype
 * pollution), so such a value does not come back as it went in, by design.
 */
const json = fc.jsonValue({ maxDepth: 3 }).filter((value) => !JSON.stringify(value).includes('"__proto__"'));

test("codec - a map with encoded entries decodes to the map with those keys set, at every header size", (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 65_535 }),
      fc.array(fc.tuple(fc.string(), json), { minLength: 1, maxLength: 3 }),
      (size, extra) => {
        const map: Record<string, unknown> = {};
        for (let i = 0; i < size; i++) map[`k${i}`] = i;
        const added = Object.fromEntries(extra.map(([k, v]) => [`x:${k}`, v]));
        const bytes = withEncodedEntries(encode(map), Object.entries(added).map(([k, v]) => [k, encode(v)] as const));
        const expected = JSON.parse(JSON.stringify({ ...map, ...added }));
        return JSON.stringify(decode(bytes)) === JSON.stringify(expected);
      },
    ),
    { numRuns: 40 },
  );
  // Across the header's size steps (msgpackr writes objects with a 16-bit size; more entries need 32 bits).
  for (const size of [0, 14, 15, 65_534, 65_535]) {
    const map = Object.fromEntries(Array.from({ length: size }, (_, i) => [`k${i}`, i]));
    const bytes = withEncodedEntries(encode(map), [["last", encode({ a: [1, "b"] })]]);
    const decoded = decode<Record<string, unknown>>(bytes);
    t.is(Object.keys(decoded).length, size + 1);
    t.deepEqual(decoded["last"], { a: [1, "b"] });
    if (size > 0) t.is(decoded[`k${size - 1}`], size - 1);
  }
});

test("codec - a __proto__ key never sets a decoded object's prototype", (t) => {
  const decoded = decode<Record<string, unknown>>(encode(JSON.parse('{"__proto__": {"polluted": true}, "a": 1}')));
  t.is(Object.getPrototypeOf(decoded), Object.prototype);
  t.is((decoded as { polluted?: unknown }).polluted, undefined);
  t.is(({} as { polluted?: unknown }).polluted, undefined);
  t.is(decoded["a"], 1);
});

test("codec - encoded entries are only added to maps", (t) => {
  t.throws(() => withEncodedEntries(encode([1, 2]), [["a", encode(1)]]), { message: /not a msgpack map/ });
  t.throws(() => withEncodedEntries(encode("text"), [["a", encode(1)]]), { message: /not a msgpack map/ });
  const map = encode({ a: 1 });
  t.is(withEncodedEntries(map, []), map);
});
