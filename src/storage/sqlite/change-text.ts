/**
 * A profile change as it crosses to the writer thread (write-set.ts: ProfileRow): two JSON texts.
 * Its shapes, `[[[op, target?]…]…]`, say which operations each step runs: every distinct list of
 * an event's operations, by name with its path (dotted) or identity type. Its values,
 * `[at, [[eventId, shape, [value…]]…]]`, give each step its event, the index of its shape and
 * its operations' values in order (null for `unset`). A rule book gives the same few shapes
 * request after request, so the writer keeps the shapes it read, by their text, and parses only
 * the values: a third of the text, without the paths.
 */
import type { ProfileOp } from '../../model/profile-ops.js';
import type { ProfileChange } from '../../model/records.js';
import { pathText, splitPath } from './json-texts.js';

/**
 * A change's texts: its shapes and its values. In a batch's message the shapes are the index of
 * their text in the batch's list (shareShapes), which holds each text once however many rows share it.
 */
export type ChangeText = [shapes: string | number, values: string];

/** An operation without its value: its name, and its path's segments or its identity type. */
type Shape = { op: ProfileOp['op']; path?: string[]; type?: string };

/** An operation's shape as JSON text. */
function shapeText(op: ProfileOp): string {
  if (op.op === 'identify') return `["identify",${JSON.stringify(op.type)}]`;
  if (!('path' in op)) return `["${op.op}"]`;
  return `["${op.op}",${pathText(op.path)}]`;
}

/** What tells an operation's shape: its identity type, its path (the array), or nothing. */
const targetOf = (op: ProfileOp): string | readonly string[] | undefined =>
  op.op === 'identify' ? op.type : 'path' in op ? op.path : undefined;

/**
 * The last step's shape: its operations' names and targets, and its text. A rule's operations
 * share their path arrays (src/domain/rules/compile.ts), so a step of the same rules as the last
 * one is told by comparing those, without joining its text again.
 */
let last: {
  names: string[];
  targets: (string | readonly string[] | undefined)[];
  text: string;
  /** The shapes text of a change of this step's shape alone: one string for all such changes. */
  alone: string;
} = { names: [], targets: [], text: '[]', alone: '[[]]' };

/** A step's shape as JSON text: `[[op, target?]…]`. */
function stepShape(ops: ProfileOp[]): string {
  const { names, targets } = last;
  let same = names.length === ops.length;
  for (let j = 0; same && j < ops.length; j++) {
    same = names[j] === ops[j]!.op && targets[j] === targetOf(ops[j]!);
  }
  if (same) return last.text;
  let text = '[';
  for (let j = 0; j < ops.length; j++) text += (j === 0 ? '' : ',') + shapeText(ops[j]!);
  text += ']';
  last = { names: ops.map((op) => op.op), targets: ops.map(targetOf), text, alone: `[${text}]` };
  return last.text;
}

/** An operation's value (null for `unset`, which has none). */
const valueOf = (op: ProfileOp): unknown => ('value' in op ? op.value : null);

/**
 * Distinct texts in the order first given, each with its index: mostly one text comes again and
 * again (the same rules), told by comparing it with the last before any map is made.
 */
class DistinctTexts {
  readonly texts: string[] = [];
  private indexes: Map<string, number> | null = null;

  indexOf(text: string): number {
    const last = this.texts.length - 1;
    if (last >= 0 && this.texts[last] === text) return last;
    if (last < 0) return this.texts.push(text) - 1;
    this.indexes ??= new Map(this.texts.map((known, i) => [known, i]));
    let index = this.indexes.get(text);
    if (index === undefined) {
      index = this.texts.push(text) - 1;
      this.indexes.set(text, index);
    }
    return index;
  }
}

/**
 * The texts of a change (see the module's comment). The values are one JSON.stringify: its text is
 * one flat string, where a text joined piece by piece is a chain of pieces, copied into one string
 * when the message to the writer is written (bench/README.md, *The rules' cost, measured again*).
 */
export function encodeChange(change: ProfileChange): ChangeText {
  const shapes = new DistinctTexts();
  const steps = change.steps.map((step) => [
    step.event,
    shapes.indexOf(stepShape(step.ops)),
    step.ops.map(valueOf),
  ]);
  const { texts } = shapes;
  const shapesText = texts.length === 1 && texts[0] === last.text ? last.alone : `[${texts.join(',')}]`;
  return [shapesText, JSON.stringify([change.at, steps])];
}

/** Shapes read, by their text: most kept, and most characters of their texts. */
export const SHAPE_CACHE_BOUNDS = { maxEntries: 256, maxChars: 1024 * 1024 };

const shapesRead = new Map<string, Shape[][]>();
let shapeChars = 0;

function readShapes(text: string): Shape[][] {
  let shapes = shapesRead.get(text);
  if (shapes !== undefined) return shapes;
  shapes = (JSON.parse(text) as [ProfileOp['op'], string?][][]).map((ops) =>
    ops.map(([op, target]): Shape => {
      if (op === 'identify') return { op, type: target! };
      return target === undefined ? { op } : { op, path: splitPath(target) };
    }),
  );
  if (text.length <= SHAPE_CACHE_BOUNDS.maxChars) {
    shapesRead.set(text, shapes);
    shapeChars += text.length;
    for (const [oldest] of shapesRead) {
      if (shapesRead.size <= SHAPE_CACHE_BOUNDS.maxEntries && shapeChars <= SHAPE_CACHE_BOUNDS.maxChars)
        break;
      shapesRead.delete(oldest);
      shapeChars -= oldest.length;
    }
  }
  return shapes;
}

/**
 * Gives each distinct shapes text of these changes once, in the list answered, and names it in its
 * change by its index there (the changes are the caller's own, changed in place).
 */
export function shareShapes(changes: ChangeText[]): string[] {
  const shared = new DistinctTexts();
  for (const change of changes) {
    if (typeof change[0] === 'string') change[0] = shared.indexOf(change[0]);
  }
  return shared.texts;
}

/** The change its texts say (encodeChange), its shapes named in `shared` (shareShapes) or given. */
export function decodeChange([given, valuesText]: ChangeText, shared: readonly string[] = []): ProfileChange {
  const shapesText = typeof given === 'number' ? shared[given] : given;
  if (shapesText === undefined) throw new Error(`no shapes ${given} in the batch`);
  const shapes = readShapes(shapesText);
  const [at, steps] = JSON.parse(valuesText) as [string, [string, number, unknown[]][]];
  const decoded: ProfileChange = { at, steps: [] };
  for (const [event, index, values] of steps) {
    const shape = shapes[index]!;
    const ops: ProfileOp[] = [];
    for (let i = 0; i < shape.length; i++) {
      const { op, path, type } = shape[i]!;
      const value = values[i];
      if (op === 'identify') ops.push({ op, type: type!, value: value as string });
      else if (path === undefined) ops.push({ op, value } as ProfileOp);
      else if (op === 'unset') ops.push({ op, path });
      else ops.push({ op, path, value } as ProfileOp);
    }
    decoded.steps.push({ event, ops });
  }
  return decoded;
}
