/** The auth service's endpoint for services handed a Bearer token (the gateway verifies locally, without it). */
import { Type, type Static } from "@sinclair/typebox";
import { subjects } from "../subjects.js";
import { bodyOf } from "../validation/fields.js";
import { endpointsOf } from "./endpoint.js";
import { arrayOf, objectOf, string } from "./json-schema.js";

/** What `corral.auth.verify` answers for a valid token. */
const verifiedTokenSchema = objectOf(
  {
    userId: string,
    roles: arrayOf(string),
    issuedAt: Type.Integer({ minimum: 0, description: "ms since the epoch" }),
    expiresAt: Type.Integer({ minimum: 0, description: "ms since the epoch" }),
    tokenId: string,
  },
  {
    optional: {
      tenant: objectOf(
        { name: string, uid: string },
        { description: 'The tenant named at login and its uid then ("" for a record written before tenants had uids); absent for a token valid in every tenant.' },
      ),
    },
  },
);
export type VerifiedToken = Static<typeof verifiedTokenSchema>;

const define = endpointsOf("auth");

export const authEndpoints = {
  /** `{token}` -> the token's claims, or 401 with the reason. */
  "auth.verify": define.internal({
    subject: subjects.auth.verify,
    request: bodyOf({ token: Type.String({ minLength: 1 }) }),
    reply: verifiedTokenSchema,
  }),
};
