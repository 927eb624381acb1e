/** The auth service's endpoint for services handed a Bearer token (the gateway verifies locally, without it). */
import { Type } from "@sinclair/typebox";
import { subjects } from "../subjects.js";
import { bodyOf } from "../validation/fields.js";
import { endpointsOf } from "./endpoint.js";
import { arrayOf, count, objectOf, string, typedSchema } from "./json-schema.js";

/** What `corral.auth.verify` answers for a valid token. */
export interface VerifiedToken {
  userId: string;
  roles: string[];
  /** ms since the epoch */
  issuedAt: number;
  /** ms since the epoch */
  expiresAt: number;
  tokenId: string;
  /** The tenant named at login and its uid then ("" for a record written before tenants had uids); absent for a token valid in every tenant. */
  tenant?: { name: string; uid: string };
}

const define = endpointsOf("auth");

export const authEndpoints = {
  /** `{token}` -> the token's claims, or 401 with the reason. */
  "auth.verify": define.internal({
    subject: subjects.auth.verify,
    request: bodyOf({ token: Type.String({ minLength: 1 }) }),
    reply: typedSchema<VerifiedToken>(
      objectOf(
        { userId: string, roles: arrayOf(string), issuedAt: count, expiresAt: count, tokenId: string },
        { optional: { tenant: objectOf({ name: string, uid: string }) } },
      ),
    ),
  }),
};
