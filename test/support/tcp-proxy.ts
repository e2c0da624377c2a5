import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a database, to play network faults: `down()` refuses connections and cuts
 * the open ones (as a stopped server would), `blackhole()` accepts connections and never answers (as
 * an unreachable host would), `up()` forwards again.
 */
export class TcpProxy {
  private server: Server;
  private readonly sockets = new Set<Socket>();
  private mode: 'forward' | 'blackhole' = 'forward';
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    this.server = this.make();
  }

  /** The URL `url` with its host and port replaced by the proxy's. */
  static async in(front: string): Promise<{ proxy: TcpProxy; url: string }> {
    const target = new URL(front);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.up();
    const url = new URL(front);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    return { proxy, url: url.toString() };
  }

  private make(): Server {
    return createServer((client) => {
      this.track(client);
      if (this.mode === 'blackhole') return;
      const upstream = connect(this.targetPort, this.targetHost);
      this.track(upstream);
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private cut(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  /** Forwards connections (on the same port as before, once one was given). */
  async up(): Promise<void> {
    this.mode = 'forward';
    if (this.server.listening) return;
    this.server = this.make();
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        const address = this.server.address();
        if (address && typeof address === 'object') this.port = address.port;
        resolve();
      });
    });
  }

  /** Refuses new connections and cuts the open ones. */
  async down(): Promise<void> {
    const closed = new Promise<void>((resolve) => {
      if (this.server.listening) this.server.close(() => resolve());
      else resolve();
    });
    this.cut();
    await closed;
  }

  /** Cuts the open connections; new ones are accepted and never answered. */
  async blackhole(): Promise<void> {
    await this.up();
    this.mode = 'blackhole';
    this.cut();
  }

  async close(): Promise<void> {
    await this.down();
  }
}
