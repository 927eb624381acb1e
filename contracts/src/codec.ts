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
