import { NotFoundError, parseName } from "@corral/contracts";
import type { EndpointHandlers, PluginTypeReader as PluginTypeStore } from "@corral/shared";
import { toSpecView } from "../domain/plugin-spec-view.js";
import { kindLabel, parseKind } from "./request.js";

/** `GET /plugins/{plugin-type}` and `GET /plugins/{plugin-type}/{plugin-name}`. */
export function typeHandlers(types: PluginTypeStore) {
  return {
    "plugins.listTypes": async (req) => {
      const kind = parseKind(req.params["type"]);
      return (await types.list(kind)).map(toSpecView);
    },
    "plugins.getType": async (req) => {
      const kind = parseKind(req.params["type"]);
      const name = parseName(req.params["plugin"], "plugin");
      const spec = await types.get(kind, name);
      if (!spec) throw new NotFoundError(`${kindLabel(kind)} type`, name);
      return toSpecView(spec);
    },
  } satisfies EndpointHandlers<"plugins">;
}
