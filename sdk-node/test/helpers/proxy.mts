import { createServer, connect, type Socket, type Server } from "node:net";

/**
 * A loopback TCP proxy between the SDK and the runtime: counts WebSocket upgrades, can delay what
 * the runtime sends (to deliver an invoke after its deadline) and can destroy every socket (a real
 * connection loss).
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private server?: Server;
  upgrades = 0;
  /** Delay applied to bytes going from the runtime to the SDK. */
  downstreamDelayMs = 0;

  constructor(private readonly target: string) {}

  async start(): Promise<string> {
    const target = new URL(this.target);
    this.server = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      this.sockets.add(client).add(upstream);
      client.once("data", (chunk) => {
        const head = chunk.toString("latin1");
        if (/^GET /.test(head) && /upgrade: websocket/i.test(head)) this.upgrades++;
      });
      client.pipe(upstream);
      upstream.on("data", (chunk) => {
        if (this.downstreamDelayMs > 0) setTimeout(() => client.writable && client.write(chunk), this.downstreamDelayMs);
        else client.write(chunk);
      });
      const end = () => { client.destroy(); upstream.destroy(); this.sockets.delete(client); this.sockets.delete(upstream); };
      client.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    if (typeof address !== "object" || !address) throw new Error("proxy has no address");
    return `http://127.0.0.1:${address.port}`;
  }

  /** Destroys every open connection; new ones are accepted right away. */
  drop(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  async close(): Promise<void> {
    this.drop();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
