/** `-o json|yaml|table`: how a command's answer is printed on stdout. */
import { stringify } from "yaml";
import { UsageError } from "../errors.js";
import { autoTable } from "./table.js";

export const OUTPUT_FORMATS = ["table", "json", "yaml"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** What a command answers: the data, and optionally how it looks as a table (else {@link autoTable}). */
export interface CommandResult {
  value: unknown;
  table?: () => string;
}

export function parseOutputFormat(given: string | undefined): OutputFormat {
  if (given === undefined) return "table";
  if ((OUTPUT_FORMATS as readonly string[]).includes(given)) return given as OutputFormat;
  throw new UsageError(`-o ${given}: the output format is one of ${OUTPUT_FORMATS.join(", ")}`);
}

/** The text to print (with a final newline, empty when there is nothing to show). */
export function formatResult(result: CommandResult, format: OutputFormat): string {
  const text = render(result, format);
  return text === "" ? "" : text.endsWith("\n") ? text : `${text}\n`;
}

function render(result: CommandResult, format: OutputFormat): string {
  switch (format) {
    case "json":
      return result.value === undefined ? "" : JSON.stringify(result.value, null, 2);
    case "yaml":
      return result.value === undefined ? "" : stringify(result.value);
    case "table":
      return result.table ? result.table() : autoTable(result.value);
  }
}
