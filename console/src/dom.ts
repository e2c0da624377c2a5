/** A tiny DOM builder. Text always goes through text nodes: event data is untrusted and never parsed as HTML. */
type Child = Node | string | number | null | undefined | false;
type AttrValue = string | number | boolean | null | undefined | ((event: Event) => void);
export type Attrs = Record<string, AttrValue>;

const PROPERTIES = new Set(['value', 'checked', 'disabled', 'selected', 'hidden', 'spellcheck']);

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') element.addEventListener(key.slice(2), value);
    else if (PROPERTIES.has(key)) (element as unknown as Record<string, unknown>)[key] = value;
    else element.setAttribute(key === 'className' ? 'class' : key, value === true ? '' : String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function clear(element: Element): void {
  element.replaceChildren();
}

/** Local date and time of an ISO timestamp. */
export function formatTime(iso: string | undefined | null, withDate = false): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return withDate ? date.toLocaleString() : date.toLocaleTimeString();
}

/** A short JSON rendering for table cells. */
export function compactJson(value: unknown, max = 160): string {
  const text = JSON.stringify(value ?? {});
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The end of a long id: ids made by the service start with their time (UUID version 7 layout), so
 * two made the same day share their start; their end is random.
 */
export function shortId(id: string | undefined | null): string {
  if (!id) return '';
  return id.length > 12 ? `…${id.slice(-8)}` : id;
}
