/**
 * Macro scanning and parsing (docs/catalog.md, Macros). Error messages are Coopr's, so configs written for it
 * fail with the messages their authors know.
 */
import { BadRequestError } from "@corral/contracts";

/** Default ip type of `%ip.service.X%` and `%ip.self%`. */
export const DEFAULT_IP_TYPE = "bind_v4";

/** What a macro name refers to. */
export type MacroRef =
  | { readonly kind: "cluster.owner" }
  | { readonly kind: "host.self" }
  | { readonly kind: "ip.self"; readonly ipType: string }
  | { readonly kind: "host.service"; readonly service: string; readonly index: number | undefined }
  | { readonly kind: "ip.service"; readonly service: string; readonly ipType: string; readonly index: number | undefined }
  | { readonly kind: "num.service"; readonly service: string }
  | { readonly kind: "instance.self.service"; readonly service: string };

/** One parsed macro (the text between two `%`). */
export interface MacroExpression {
  /** The macro text without the surrounding `%`. */
  readonly source: string;
  readonly ref: MacroRef;
  /** `map(...)` format: every `$` is replaced by the value, `$$` is a literal `$`. */
  readonly format: string | undefined;
  /** `join(...)` separator. @default "," */
  readonly separator: string;
  /** Whether the value is the same for every node of the cluster (cacheable per cluster). */
  readonly nodeIndependent: boolean;
}

/** A string split into literal text and macros: `literals.length === macros.length + 1`. */
export interface ScannedString {
  readonly literals: readonly string[];
  readonly macros: readonly MacroExpression[];
}

/** Thrown for malformed macros (HTTP 400, code `macro_syntax`). */
function syntaxError(message: string, macro: string): BadRequestError {
  return new BadRequestError(message, { macro: `%${macro}%` }, "macro_syntax");
}

/** Position of the next `%` at or after `pos` that is not part of a `%%` escape, or -1. */
function findNextPercent(text: string, pos: number): number {
  let p = pos;
  while (p < text.length) {
    if (text.charCodeAt(p) === 37 /* % */) {
      if (p + 1 < text.length && text.charCodeAt(p + 1) === 37) {
        p += 2;
        continue;
      }
      return p;
    }
    p++;
  }
  return -1;
}

/**
 * Splits a string into literals and parsed macros. Returns undefined when the string holds no macro.
 * `%%` is skipped while looking for delimiters and kept verbatim; a lone `%` is text.
 * @throws BadRequestError `macro_syntax` for the first malformed macro.
 */
export function scanString(text: string): ScannedString | undefined {
  if (text.indexOf("%") < 0) return undefined;
  const literals: string[] = [];
  const macros: MacroExpression[] = [];
  let pos = 0;
  while (pos < text.length) {
    const pos1 = findNextPercent(text, pos);
    if (pos1 < 0) break;
    const pos2 = findNextPercent(text, pos1 + 1);
    if (pos2 < 0) break;
    literals.push(text.slice(pos, pos1));
    macros.push(parseMacro(text.slice(pos1 + 1, pos2)));
    pos = pos2 + 1;
  }
  if (macros.length === 0) return undefined;
  literals.push(text.slice(pos));
  return { literals, macros };
}

const NAME_CHAR = /[\p{L}\p{Nd}_.-]/u;

/**
 * Parses one macro (no whitespace):
 * `join(<inner>,<literal>)` | `<inner>`; `<inner>` = `map(<basic>,<literal>)` | `<basic>`;
 * `<basic>` = name [`[` digits `]`]; literals in `'…'` or `"…"` without escapes.
 * @throws BadRequestError `macro_syntax`.
 */
export function parseMacro(input: string): MacroExpression {
  let name: string | undefined;
  let index: number | undefined;
  let format: string | undefined;
  let separator: string | undefined;

  const expect = (pos: number, c: string): number => {
    if (pos >= input.length || input[pos] !== c) throw syntaxError(`'${c}' expected at position ${pos}`, input);
    return pos + 1;
  };
  const parseLiteral = (pos: number): [string, number] => {
    const quote = input[pos];
    if (pos >= input.length || (quote !== '"' && quote !== "'")) {
      throw syntaxError(`Expected ' or " at position ${pos}`, input);
    }
    const end = input.indexOf(quote, pos + 1);
    if (end < 0) throw syntaxError(`Expected ${quote} at position ${pos}`, input);
    return [input.slice(pos + 1, end), end + 1];
  };
  const parseInstance = (pos: number): number => {
    if (input[pos] !== "[") return pos;
    let p = pos + 1;
    let endSeen = false;
    for (; p < input.length; p++) {
      const c = input.charCodeAt(p);
      if (c === 93 /* ] */) {
        endSeen = true;
        break;
      }
      if (c < 48 || c > 57) throw syntaxError("A service number must consists of digits only.", input);
    }
    if (p === pos + 1) throw syntaxError("No service number seen.", input);
    if (!endSeen) throw syntaxError("No ending bracket ']' seen.", input);
    index = Number(input.slice(pos + 1, p));
    return p + 1;
  };
  const parseBasic = (pos: number): number => {
    let p = pos;
    while (p < input.length && NAME_CHAR.test(input[p] as string)) p++;
    if (p === pos) throw syntaxError("A macro name must not be empty.", input);
    name = input.slice(pos, p);
    return p < input.length ? parseInstance(p) : p;
  };
  const parseInner = (pos: number): number => {
    if (input.startsWith("map(", pos)) {
      let p = parseBasic(pos + 4);
      p = expect(p, ",");
      [format, p] = parseLiteral(p);
      return expect(p, ")");
    }
    return parseBasic(pos);
  };

  let pos: number;
  if (input.startsWith("join(")) {
    pos = parseInner(5);
    pos = expect(pos, ",");
    [separator, pos] = parseLiteral(pos);
    pos = expect(pos, ")");
  } else {
    pos = parseInner(0);
  }
  if (pos < input.length) throw syntaxError(`Extra characters after macro at position ${pos}`, input);
  if (name === undefined) throw syntaxError("A macro name must be present.", input);
  const ref = refFor(name, index, input);
  const nodeIndependent = ref.kind !== "host.self" && ref.kind !== "ip.self" && ref.kind !== "instance.self.service";
  return { source: input, ref, format, separator: separator ?? ",", nodeIndependent };
}

function serviceAfter(prefix: string, name: string, input: string): string {
  const service = name.slice(prefix.length);
  if (service === "") throw syntaxError("macro is missing a service name", input);
  return service;
}

function refFor(name: string, index: number | undefined, input: string): MacroRef {
  const invalid = (): BadRequestError => syntaxError(`'${name}' is not a valid macro name`, input);
  // Coopr accepts an instance number on macros that take none and ignores it; a config that worked there must
  // work here, so the number is ignored the same way.
  const noIndex = (ref: MacroRef): MacroRef => ref;
  if (name === "cluster.owner") return noIndex({ kind: "cluster.owner" });
  if (name === "host.self") return noIndex({ kind: "host.self" });
  if (name.startsWith("host.service.")) {
    return { kind: "host.service", service: serviceAfter("host.service.", name, input), index };
  }
  if (name.startsWith("num.service.")) {
    return noIndex({ kind: "num.service", service: serviceAfter("num.service.", name, input) });
  }
  if (name.startsWith("instance.self.service.")) {
    return noIndex({ kind: "instance.self.service", service: serviceAfter("instance.self.service.", name, input) });
  }
  if (name.startsWith("ip.")) {
    // The rest is split on its first two dots: ip.<type>.service.<svc> keeps dots in <svc>.
    const rest = name.slice(3);
    const first = rest.indexOf(".");
    const second = first < 0 ? -1 : rest.indexOf(".", first + 1);
    const parts =
      first < 0
        ? [rest]
        : second < 0
          ? [rest.slice(0, first), rest.slice(first + 1)]
          : [rest.slice(0, first), rest.slice(first + 1, second), rest.slice(second + 1)];
    const [a, b, c] = parts;
    if (parts.length === 1 && a === "self") return noIndex({ kind: "ip.self", ipType: DEFAULT_IP_TYPE });
    if (parts.length === 2 && a === "service" && b !== undefined) {
      return { kind: "ip.service", service: b, ipType: DEFAULT_IP_TYPE, index };
    }
    if (parts.length === 2 && b === "self" && a) return noIndex({ kind: "ip.self", ipType: a });
    if (parts.length === 3 && b === "service" && a && c !== undefined) {
      return { kind: "ip.service", service: c, ipType: a, index };
    }
  }
  throw invalid();
}
