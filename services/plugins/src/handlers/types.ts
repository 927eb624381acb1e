import { NotFoundError } from "@corral/contracts";
import type { EndpointHandlers, PluginTypeReader as PluginTypeStore } from "@corral/shared";
import { toSpecView } from "../domain/plugin-spec-view.js";
import { kindLabel } from "./request.js";

/** `GET /plugins/{plugin-type}` and `GET /plugins/{plugin-type}/{plugin-name}`. */
export function typeHandlers(types: PluginTypeStore) {
  return {
    "plugins.listTypes": async (req) => {
      return (await types.list(req.params.type)).map(toSpecView);
    },
    "plugins.getType": async (req) => {
      const { type: kind, plugin: name } = req.params;
      const spec = await types.get(kind, name);
      if (!spec) throw new NotFoundError(`${kindLabel(kind)} type`, name);
      return toSpecView(spec);
    },
  } satisfies EndpointHandlers<"plugins">;
}
