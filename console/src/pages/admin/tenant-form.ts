/**
 * The tenant form of the create and edit pages. Inputs are named by the path the server's validation errors name
 * (`tenant.workers`); settings the form does not show are kept from the tenant as it was.
 */
import type { Tenant } from "@corral/contracts";
import { field, type Field } from "../../components/form.js";

export interface TenantForm {
  fields: Field[];
  read(): Tenant;
}

/** A whole number as a number; anything else as typed, for the server to refuse by name. */
const numberOrText = (text: string): number | string | undefined => (text.trim() === "" ? undefined : /^-?[0-9]+$/.test(text.trim()) ? Number(text) : text);

export function tenantForm(tenant: Tenant | undefined): TenantForm {
  const show = (value: unknown) => (value === undefined || value === null ? "" : String(value));
  const name = field({ name: "tenant.name", label: "Name", required: true, value: tenant?.name ?? "" });
  const description = field({ name: "tenant.description", label: "Description", value: tenant?.description ?? "" });
  const workers = field({ name: "tenant.workers", label: "Workers", type: "number", required: true, value: show(tenant?.workers ?? 0), hint: "Provisioner workers for its tasks; 0 before deleting it." });
  const maxClusters = field({ name: "tenant.maxClusters", label: "Most clusters", type: "number", value: show(tenant?.maxClusters), hint: "Empty: unlimited." });
  const maxNodes = field({ name: "tenant.maxNodes", label: "Most nodes", type: "number", value: show(tenant?.maxNodes), hint: "Empty: unlimited." });
  if (tenant) (name.input as HTMLInputElement).readOnly = true;
  return {
    fields: [name, description, workers, maxClusters, maxNodes],
    read() {
      const { description: _d, maxClusters: _c, maxNodes: _n, ...kept } = tenant ?? { name: "", workers: 0 };
      const optional = (key: string, value: unknown) => (value === undefined || value === "" ? {} : { [key]: value });
      // Numbers the user typed wrong go as typed: the server's 400 names the field.
      return {
        ...kept,
        name: name.value().trim(),
        workers: numberOrText(workers.value()) as number,
        ...optional("description", description.value()),
        ...optional("maxClusters", numberOrText(maxClusters.value())),
        ...optional("maxNodes", numberOrText(maxNodes.value())),
      };
    },
  };
}
