import { Packr } from "msgpackr";

/**
 * The one msgpack codec every service uses on the wire and in KV.
 * Records are off so any msgpack peer can read what we write; maps decode to plain objects.
 */
const packr = new Packr({ useRecords: false, mapsAsObjects: true, moreTypes: false });

/** Encodes a value to msgpack bytes. */
export function encode(value: unknown): Uint8Array {
  return packr.pack(value);
}

/** Decodes msgpack bytes; the caller validates the shape. */
export function decode<T = unknown>(bytes: Uint8Array): T {
  return packr.unpack(bytes) as T;
}

/** One map entry whose value is already encoded (a part many messages share, encoded once). */
export type EncodedEntry = readonly [key: string, value: Uint8Array];

/**
 * `map` (the msgpack bytes of a map, as {@link encode} makes them) with `entries` added at its end: decodes to the
 * map's object with those keys set to the entries' decoded values. Keys must not already be in `map`.
 */
export function withEncodedEntries(map: Uint8Array, entries: readonly EncodedEntry[]): Uint8Array {
  if (entries.length === 0) return map;
  const { count, headerLength } = mapHeaderOf(map);
  const keys = entries.map(([key]) => packr.pack(key));
  const header = mapHeader(count + entries.length);
  let length = header.length + map.length - headerLength;
  entries.forEach(([, value], i) => (length += (keys[i] as Uint8Array).length + value.length));
  const out = new Uint8Array(length);
  out.set(header, 0);
  out.set(map.subarray(headerLength), header.length);
  let at = header.length + map.length - headerLength;
  entries.forEach(([, value], i) => {
    const key = keys[i] as Uint8Array;
    out.set(key, at);
    out.set(value, at + key.length);
    at += key.length + value.length;
  });
  return out;
}

function mapHeaderOf(map: Uint8Array): { count: number; headerLength: number } {
  const first = map[0] ?? 0;
  if (first >= 0x80 && first <= 0x8f) return { count: first & 0x0f, headerLength: 1 };
  const view = new DataView(map.buffer, map.byteOffset, map.byteLength);
  if (first === 0xde && map.length >= 3) return { count: view.getUint16(1), headerLength: 3 };
  if (first === 0xdf && map.length >= 5) return { count: view.getUint32(1), headerLength: 5 };
  throw new TypeError("withEncodedEntries: the bytes are not a msgpack map");
}

function mapHeader(count: number): Uint8Array {
  if (count < 0x10) return Uint8Array.of(0x80 | count);
  if (count < 0x10000) return Uint8Array.of(0xde, count >> 8, count & 0xff);
  return Uint8Array.of(0xdf, (count >>> 24) & 0xff, (count >> 16) & 0xff, (count >> 8) & 0xff, count & 0xff);
}
