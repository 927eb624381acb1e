import { NotFoundError, parseId, subjects, type ApiRequest, type Handler } from "@corral/shared";
import type { RegistryStore } from "../adapters/registry-store.js";

export function provisionerHandlers(registry: RegistryStore): Record<string, Handler> {
  const s = subjects.tenancy.provisioners;
  return {
    [s.list]: () => registry.provisioners(),
    [s.get]: async (req: ApiRequest) => {
      const id = parseId(req.params["id"], "id");
      const found = await registry.provisioner(id);
      if (!found) throw new NotFoundError("provisioner", id);
      return found;
    },
  };
}
