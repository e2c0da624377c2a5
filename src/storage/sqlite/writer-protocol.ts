/** The messages between the service's thread (writer-thread.ts) and the writer thread (writer.ts). */
import type { ErrorShape } from './errors.js';
import type { WriteOps } from './writes.js';

export interface WriterData {
  file: string;
  sync: 'normal' | 'full';
  /** Profile changes may be held (held-profiles.ts): no other process writes the store. */
  hold: boolean;
}

export type WriteOp = keyof WriteOps;

export type WriterRequest = { id: number; op: WriteOp; args: unknown[] } | { id: number; op: 'close' };

export type WriterReply =
  | { ready: true }
  | { ready: false; error: ErrorShape }
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: ErrorShape };
