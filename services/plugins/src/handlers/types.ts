import { NotFoundError, parseName, subjects, type ApiRequest, type Handler } from "@corral/shared";
import { toSpecView } from "../domain/plugin-spec-view.js";
import type { PluginTypeReader as PluginTypeStore } from "@corral/shared";
import { kindLabel, parseKind } from "./request.js";

/** `GET /plugins/{plugin-type}` and `GET /plugins/{plugin-type}/{plugin-name}` (spec 2.9, 4.8). */
export function typeHandlers(types: PluginTypeStore): Record<string, Handler> {
  const s = subjects.plugins;
  return {
    [s.listTypes]: async (req: ApiRequest) => {
      const kind = parseKind(req.params["type"]);
      return (await types.list(kind)).map(toSpecView);
    },
    [s.getType]: async (req: ApiRequest) => {
      const kind = parseKind(req.params["type"]);
      const name = parseName(req.params["plugin"], "plugin");
      const spec = await types.get(kind, name);
      if (!spec) throw new NotFoundError(`${kindLabel(kind)} type`, name);
      return toSpecView(spec);
    },
  };
}
