/**
 * The OpenAPI description a running gateway serves (`GET /v2/openapi.json`), and a check of real answers against
 * it: the status must be one the document lists for the operation, the content type one it describes, and a JSON
 * body must match the described schema (validated with Ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses it).
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { openApiPath, type DocMethod, type DocOperation, type OpenApiDocument } from "@corral/contracts";
import type { ApiResponse } from "./api.js";

export interface ApiDescription {
  /** As served, `$ref`s included. */
  served: OpenApiDocument;
  /** The operation of `method` on a table route (`/clusters/:id`), `$ref`s resolved; undefined when not described. */
  operation(method: string, routePath: string): DocOperation | undefined;
  /** What is wrong with `res` as an answer to `method` on `routePath` by the document; none when it matches. */
  answerProblems(method: string, routePath: string, res: ApiResponse): string[];
}

/** Fetches the description from a gateway (no identity: it is public) and prepares its schemas for checking. */
export async function loadApiDescription(baseUrl: string): Promise<ApiDescription> {
  const res = await fetch(`${baseUrl}/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /openapi.json: HTTP ${res.status}`);
  const text = await res.text();
  const served = JSON.parse(text) as OpenApiDocument;
  // dereference works on (and answers) a copy whose `$ref`s are replaced by what they name.
  const resolved = (await SwaggerParser.dereference(JSON.parse(text))) as unknown as OpenApiDocument;
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  const validators = new Map<object, ValidateFunction>();
  const validatorOf = (schema: object) => {
    let validate = validators.get(schema);
    if (!validate) validators.set(schema, (validate = ajv.compile(schema)));
    return validate;
  };
  const operation = (method: string, routePath: string) => resolved.paths[openApiPath(routePath)]?.[method.toLowerCase() as DocMethod];

  return {
    served,
    operation,
    answerProblems(method, routePath, answer) {
      const op = operation(method, routePath);
      if (!op) return [`${method} ${routePath} is not in the document`];
      const described = op.responses[String(answer.status)];
      if (!described || "$ref" in described) {
        return [`HTTP ${answer.status} is not among the answers listed for ${op.operationId}: ${Object.keys(op.responses).join(", ")}`];
      }
      if (answer.text === "") {
        return described.content === undefined ? [] : [`no body, but the document describes one for HTTP ${answer.status}`];
      }
      const mediaType = (answer.headers.get("content-type") ?? "").split(";")[0]!.trim();
      const content = described.content?.[mediaType];
      if (!content) return [`content type ${mediaType} is not described for HTTP ${answer.status} (${Object.keys(described.content ?? {}).join(", ") || "no body"})`];
      if (mediaType !== "application/json") return [];
      const validate = validatorOf(content.schema);
      if (validate(JSON.parse(answer.text))) return [];
      return (validate.errors ?? []).map((e) => `$${e.instancePath}: ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`);
    },
  };
}
