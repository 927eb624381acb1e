/**
 * Create a cluster: a template, a size and overrides. Submitting asks for a dry run first; its layout and plan
 * are shown for the user to confirm. Provider fields the server asks for get a form generated from the provider
 * type; validation errors show beside the field they name.
 */
import type { ClusterTemplate, CreateClusterBody, JsonObject, Provider } from "@corral/contracts";
import { ApiError } from "../api.js";
import { confirmDialog } from "../components/dialog.js";
import { h, replaceChildren } from "../components/dom.js";
import { dryRunPreview, isDryRunResult } from "../components/dry-run-preview.js";
import { clearErrors, field, formMessage, showServerError, type Field } from "../components/form.js";
import { providerFieldsForm, type ProviderFieldsForm } from "../components/provider-fields.js";
import { clusterPath } from "../paths.js";
import type { MountedPage, PageContext } from "../router.js";

const HOUR_MS = 3_600_000;

const list = (text: string) => text.split(",").map((s) => s.trim()).filter(Boolean);

export function createClusterPage(ctx: PageContext): MountedPage {
  const element = h("section", { class: "create-cluster" }, h("h1", null, "New cluster"), h("p", { class: "muted" }, "Loading the catalog…"));
  const message = formMessage();
  let templates: ClusterTemplate[] = [];
  let providers: Provider[] = [];
  let extra: ProviderFieldsForm | undefined;

  const name = field({ name: "name", label: "Name", required: true });
  const template = field({ name: "clusterTemplate", label: "Template", type: "select", required: true });
  const size = field({ name: "numMachines", label: "Machines", type: "number", required: true, value: "1" });
  const provider = field({ name: "provider", label: "Provider", type: "select", hint: "Empty: the template's default." });
  const hardwaretype = field({ name: "hardwaretype", label: "Hardware type", type: "select" });
  const imagetype = field({ name: "imagetype", label: "Image type", type: "select" });
  const services = field({ name: "services", label: "Services", hint: "Comma separated; empty: the template's defaults." });
  const lease = field({ name: "initialLeaseDuration", label: "Lease (hours)", type: "number", hint: "Empty: the template's initial lease; 0: its maximum." });
  const dnsSuffix = field({ name: "dnsSuffix", label: "DNS suffix" });
  const config = field({ name: "config", label: "Config (JSON)", type: "textarea", hint: "Empty: the template's default config." });
  const description = field({ name: "description", label: "Description" });
  const fields: Field[] = [name, template, size, provider, hardwaretype, imagetype, services, lease, dnsSuffix, config, description];
  const extraSlot = h("div");

  const setChoices = (f: Field, choices: readonly string[], selected = "") => {
    replaceChildren(f.input, ...["", ...choices].map((c) => h("option", { value: c, selected: c === selected }, c || "(template default)")));
  };
  const templateChosen = () => {
    const t = templates.find((x) => x.name === template.value());
    if (!t) return;
    setChoices(hardwaretype, t.compatibility.hardwaretypes);
    setChoices(imagetype, t.compatibility.imagetypes);
    services.input.setAttribute("placeholder", t.defaults.services.join(", "));
    config.input.setAttribute("placeholder", JSON.stringify(t.defaults.config));
  };
  template.input.addEventListener("change", templateChosen);

  const body = (): CreateClusterBody => {
    let parsedConfig: JsonObject | undefined;
    if (config.value().trim()) {
      try {
        parsedConfig = JSON.parse(config.value()) as JsonObject;
      } catch (err) {
        throw new ApiError(400, "bad_request", `config is not valid JSON: ${(err as Error).message}`, { field: "config" });
      }
    }
    const optional = (key: string, value: string) => (value ? { [key]: value } : {});
    return {
      name: name.value().trim(),
      clusterTemplate: template.value(),
      numMachines: Number(size.value()),
      ...optional("provider", provider.value()),
      ...optional("hardwaretype", hardwaretype.value()),
      ...optional("imagetype", imagetype.value()),
      ...optional("dnsSuffix", dnsSuffix.value().trim()),
      ...optional("description", description.value()),
      ...(list(services.value()).length ? { services: list(services.value()) } : {}),
      ...(lease.value() !== "" ? { initialLeaseDuration: Math.round(Number(lease.value()) * HOUR_MS) } : {}),
      ...(parsedConfig ? { config: parsedConfig } : {}),
      ...(extra ? { providerFields: extra.values() } : {}),
    };
  };

  const askProviderFields = async (missing: string[]) => {
    const providerName = provider.value() || templates.find((t) => t.name === template.value())?.defaults.provider || "";
    const type = providers.find((p) => p.name === providerName)?.providertype;
    if (!type) throw new Error(`the server asks for provider fields ${missing.join(", ")}, but provider ${providerName} is unknown here`);
    extra = await providerFieldsForm(ctx.api, type, missing);
    replaceChildren(extraSlot, extra.element);
    extra.fields[0]?.input.focus();
    message.show("Fill in the provider's fields, then preview again.");
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    const allFields = [...fields, ...(extra?.fields ?? [])];
    try {
      const request = body();
      const dry = await ctx.api.dryRun("clusters.create", { body: request });
      clearErrors(allFields, message);
      const preview = isDryRunResult(dry) ? dryRunPreview(dry) : h("p", null, "No layout was answered.");
      const confirmed = await confirmDialog({ title: `Create cluster ${request.name}`, body: preview, confirmLabel: "Create" });
      if (!confirmed) return;
      const created = await ctx.api.call("clusters.create", { body: request });
      if (!("id" in created)) throw new Error("the create answered no cluster id");
      ctx.navigate(clusterPath(created.id));
    } catch (err) {
      if (err instanceof ApiError && err.missingFields) return askProviderFields(err.missingFields).catch((e: unknown) => showServerError(e, allFields, message));
      showServerError(err, allFields, message);
    }
  };

  void (async () => {
    try {
      // The table types catalog lists as any catalog entity; each list holds its own kind.
      templates = (await ctx.api.call("tenancy.catalog.clustertemplates.list")) as ClusterTemplate[];
      providers = (await ctx.api.call("tenancy.catalog.providers.list")) as Provider[];
    } catch (err) {
      replaceChildren(element, h("h1", null, "New cluster"), h("p", { class: "error", role: "alert" }, `Could not read the catalog: ${(err as Error).message}`));
      return;
    }
    setChoices(template, templates.map((t) => t.name), templates[0]?.name);
    template.input.querySelector('option[value=""]')?.remove();
    setChoices(provider, providers.map((p) => p.name));
    templateChosen();
    const form = h(
      "form",
      { class: "card", onsubmit: submit, novalidate: true },
      ...fields.slice(0, 3).map((f) => f.element),
      h("details", null, h("summary", null, "Overrides"), ...fields.slice(3).map((f) => f.element)),
      extraSlot,
      message.element,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Preview and create")),
    );
    replaceChildren(element, h("h1", null, "New cluster"), templates.length ? form : h("p", null, "The catalog has no cluster templates yet."));
  })();
  return { element };
}
