/**
 * Node naming: deterministic node ids and Coopr's hostname rule (`NodeService.createHostname`; docs/catalog.md,
 * Layout).
 */

/** The id of node `nodenum` of cluster `clusterId`: `<clusterId>-<nodenum>`; the same inputs give the same id. */
export function nodeIdFor(clusterId: string, nodenum: number): string {
  return `${clusterId}-${nodenum}`;
}

/**
 * Coopr's hostname: `<label><clusterId>-<nodenum>.<suffix>`, where suffix is `dnsSuffix` (a leading "." removed)
 * or `local`, and label is the cluster name without leading digits, cut so that the first DNS label is at most
 * 63 characters, with `_` and `.` turned into `-`, lower-cased. A numeric cluster id is written as a number
 * (`00000123` → `123`), as Coopr's `Long.parseLong` does; any other id is lower-cased with characters outside
 * `[a-z0-9-]` turned into `-`.
 *
 * @example createHostname("123i.am-a_clusTer", "00000001", 1002, undefined) === "i-am-a-cluster1-1002.local"
 */
export function createHostname(
  clusterName: string,
  clusterId: string,
  nodenum: number,
  dnsSuffix: string | undefined,
): string {
  let suffix = dnsSuffix === undefined || dnsSuffix === "" ? "local" : dnsSuffix;
  if (suffix.startsWith(".")) suffix = suffix.substring(1);
  const idPart = /^[0-9]+$/.test(clusterId)
    ? BigInt(clusterId).toString()
    : clusterId.toLowerCase().replace(/[^a-z0-9-]/g, "-");
  const labelSuffix = `${idPart}-${nodenum}`;
  let labelPrefix = clusterName.replace(/^[0-9]+/, "");
  if (labelPrefix.length + labelSuffix.length > 63) {
    labelPrefix = labelPrefix.substring(0, Math.max(0, 63 - labelSuffix.length));
  }
  labelPrefix = labelPrefix.replaceAll("_", "-").replaceAll(".", "-").toLowerCase();
  return `${labelPrefix}${labelSuffix}.${suffix}`;
}
