import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface CheckpointerOptions {
  /** Pause between rounds of copying. */
  intervalMs?: number;
  /** Called if the thread ends other than by `close` (the caller then checkpoints by itself). */
  onStopped?: () => void;
}

/**
 * Copies the write-ahead log back into the database file from a worker thread, so that request
 * commits never wait for it (the writer connection has automatic checkpoints turned off).
 * PASSIVE checkpoints never block the writer.
 *
 * The log only starts again from its beginning when a write transaction begins while every frame in
 * it has been copied. Under continuous writes a single pass never gets there: frames committed
 * during the pass are left over. So after a pass that left frames over, the next pass starts at
 * once, for as long as what is left keeps shrinking (about 20,000, 2,000, 300, 150 frames under
 * load); then the thread reports that it rests, the writer copies the last few commits itself
 * (`due`), and its next commit starts the log again: a stop of a few milliseconds instead of a
 * `RESTART` of 70-110 ms. The thread rests for `intervalMs`: every half second rather than more
 * often, so that pages written again meanwhile (the ends of the indexes) are copied once, which
 * measured 5-18% more /track throughput than every 100 ms.
 *
 * Each pass reports the log's length; past `maxWalBytes` (a reader holds old frames, or copying
 * cannot keep up) the writer checkpoints all of it itself as a backstop (`due`).
 */
export class Checkpointer {
  private readonly worker: Worker;
  private logBytes = 0;
  private restDue = false;
  private closing = false;
  private exited = false;

  constructor(
    dbFile: string,
    private readonly maxWalBytes: number,
    options: CheckpointerOptions = {},
  ) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    // Plain CommonJS source: runs the same under the compiled service and under tsx.
    const source = `
      const { parentPort, workerData } = require('node:worker_threads');
      const Database = require(workerData.driver);
      const db = new Database(workerData.file);
      db.pragma('busy_timeout = 1000');
      const frameBytes = db.pragma('page_size', { simple: true }) + 24;
      let closed = false;
      let last = { log: 0, checkpointed: 0 };
      let copied = Infinity;
      const pass = () => {
        if (closed) return;
        let state = last;
        try { state = db.pragma('wal_checkpoint(PASSIVE)')[0]; } catch { /* busy: next round */ }
        // Frames this pass found that the last one had not copied (all of them if the log started again).
        const found = state.log >= last.log ? state.log - last.checkpointed : state.log;
        const again = found > 0 && found < copied;
        copied = again ? found : Infinity;
        last = state;
        parentPort.postMessage({ logBytes: Math.max(state.log, 0) * frameBytes, settled: !again });
        if (again) setImmediate(pass);
        else setTimeout(pass, workerData.intervalMs);
      };
      setTimeout(pass, workerData.intervalMs);
      parentPort.on('message', () => {
        closed = true;
        db.close();
        parentPort.postMessage('closed');
      });
    `;
    const intervalMs = options.intervalMs ?? 500;
    this.worker = new Worker(source, { eval: true, workerData: { driver, file: dbFile, intervalMs } });
    this.worker.on('message', (message: unknown) => {
      if (typeof message !== 'object' || message === null) return;
      const report = message as { logBytes: number; settled: boolean };
      this.logBytes = report.logBytes;
      if (report.settled && report.logBytes > 0) this.restDue = true;
    });
    // A checkpointer that cannot run (its database gone, say) ends alone; the caller takes over.
    this.worker.on('error', () => {});
    this.worker.on('exit', () => {
      this.exited = true;
      if (!this.closing) options.onStopped?.();
    });
    this.worker.unref();
  }

  /**
   * Called by the writer after each commit: the checkpoint it should run itself now, if any.
   * `PASSIVE` once the thread has copied all but the last few commits and rests: the writer copies
   * those (a few milliseconds), so the log is wholly copied and its next commit starts it again.
   * `RESTART` when the last pass found the log longer than the bound (a reader holds old frames, or
   * copying cannot keep up): the writer copies everything and waits for readers to let go.
   */
  due(): 'PASSIVE' | 'RESTART' | null {
    if (this.logBytes > this.maxWalBytes) {
      this.logBytes = 0;
      this.restDue = false;
      return 'RESTART';
    }
    if (!this.restDue) return null;
    this.restDue = false;
    return 'PASSIVE';
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.exited) return; // ended on its own: nothing will answer
    const closed = new Promise<void>((resolve) => {
      this.worker.on('message', (message: unknown) => {
        if (message === 'closed') resolve();
      });
      this.worker.once('exit', () => resolve());
    });
    this.worker.ref(); // until it has answered: nothing else may keep the process waiting for it
    this.worker.postMessage('close');
    await closed;
    await this.worker.terminate();
  }
}
