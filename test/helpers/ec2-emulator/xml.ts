/** EC2's Query protocol, the reply side: XML in EC2's documented shapes, lists as `<fooSet><item>...</item></fooSet>`. */

export const EC2_XMLNS = "http://ec2.amazonaws.com/doc/2016-11-15/";

/** An element: text, nested elements, or a list of `<item>`s. */
export type XmlValue = string | number | boolean | Date | undefined | XmlObject | XmlItems;
export interface XmlObject {
  [name: string]: XmlValue;
}
/** Rendered as one `<item>` per entry. */
export class XmlItems {
  constructor(readonly items: XmlObject[]) {}
}

export const items = (list: XmlObject[]) => new XmlItems(list);

export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

function render(name: string, value: XmlValue): string {
  if (value === undefined) return "";
  if (value instanceof XmlItems) return `<${name}>${value.items.map((i) => `<item>${renderObject(i)}</item>`).join("")}</${name}>`;
  if (value instanceof Date) return `<${name}>${value.toISOString()}</${name}>`;
  if (typeof value === "object") return `<${name}>${renderObject(value)}</${name}>`;
  const text = String(value);
  return text === "" ? `<${name}/>` : `<${name}>${escapeXml(text)}</${name}>`;
}

function renderObject(o: XmlObject): string {
  return Object.entries(o)
    .map(([k, v]) => render(k, v))
    .join("");
}

/** `<ActionResponse xmlns=...><requestId>...</requestId>...</ActionResponse>` */
export function actionResponse(action: string, requestId: string, body: XmlObject): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${EC2_XMLNS}"><requestId>${requestId}</requestId>${renderObject(body)}</${action}Response>`;
}

/** EC2's error envelope. */
export function errorResponse(code: string, message: string, requestId: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${escapeXml(code)}</Code>` +
    `<Message>${escapeXml(message)}</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`
  );
}
