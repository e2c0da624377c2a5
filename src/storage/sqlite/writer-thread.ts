import { Worker } from 'node:worker_threads';
import { StoreUnavailableError } from '../store.js';
import { fromShape } from './errors.js';
import type { WriteOp, WriterData, WriterReply, WriterRequest } from './writer-protocol.js';
import type { WriteOps } from './writes.js';

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Starts writer.ts in a worker thread, from the compiled service or from the TypeScript sources. */
function spawn(data: WriterData): Worker {
  const ts = import.meta.url.endsWith('.ts');
  const entry = new URL(ts ? './writer.ts' : './writer.js', import.meta.url);
  if (!ts) return new Worker(entry, { workerData: data });
  // Run from the sources (tests, `npm run dev`): the thread registers the TypeScript loader first.
  const loader = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const source = `import(${loader}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(source, { eval: true, workerData: data });
}

/**
 * The service's side of the writer thread: each call is a message, answered once the writer has run
 * it (for writes: once committed). If the thread stops, every call waiting on it fails as
 * unavailable (503) and later calls fail the same way.
 */
export class WriterThread {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stopped: StoreUnavailableError | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: WriterReply) => {
      if (!('id' in reply)) return;
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if (reply.ok) waiting.resolve(reply.value);
      else waiting.reject(fromShape(reply.error));
    });
    worker.on('error', (error) => this.stop(`the writer thread failed: ${error.message}`));
    worker.on('exit', (code) => this.stop(`the writer thread stopped (exit code ${code})`));
    worker.unref();
  }

  /** Starts the thread; resolves once it has opened and migrated the database. */
  static start(data: WriterData): Promise<WriterThread> {
    const worker = spawn(data);
    return new Promise((resolve, reject) => {
      const fail = (error: unknown) => {
        worker.off('exit', exited);
        void worker.terminate();
        reject(error);
      };
      const exited = (code: number) => fail(new StoreUnavailableError(`the writer thread exited (${code})`));
      worker.once('error', fail);
      worker.once('exit', exited);
      worker.once('message', (reply: WriterReply) => {
        worker.off('error', fail);
        worker.off('exit', exited);
        if ('ready' in reply && reply.ready) resolve(new WriterThread(worker));
        else fail('error' in reply ? fromShape(reply.error) : new Error('unexpected writer reply'));
      });
    });
  }

  get alive(): boolean {
    return this.stopped === null;
  }

  call<K extends WriteOp>(op: K, ...args: Parameters<WriteOps[K]>): Promise<ReturnType<WriteOps[K]>> {
    return this.send({ id: this.nextId++, op, args }) as Promise<ReturnType<WriteOps[K]>>;
  }

  /** Closes the database (after a checkpoint) and ends the thread. */
  async close(): Promise<void> {
    if (this.stopped) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    await this.send({ id: this.nextId++, op: 'close' });
    this.worker.ref(); // until the thread has ended
    await exited;
  }

  private send(request: WriterRequest): Promise<unknown> {
    if (this.stopped) return Promise.reject(this.stopped);
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(request.id, { resolve, reject });
      this.worker.postMessage(request);
    });
  }

  private stop(reason: string): void {
    if (this.stopped) return;
    this.stopped = new StoreUnavailableError(reason);
    for (const waiting of this.pending.values()) waiting.reject(this.stopped);
    this.pending.clear();
  }
}
