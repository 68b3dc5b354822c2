import { createServer, connect, type Socket, type Server } from "node:net";

/**
 * A loopback TCP proxy between a subject and the runtime. Dropping its sockets is a real
 * connection loss for any subject, whatever language it is written in.
 */
export class DropProxy {
  private readonly sockets = new Set<Socket>();
  private server?: Server;
  upgrades = 0;

  constructor(private readonly target: URL) {}

  async start(): Promise<string> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      this.sockets.add(client).add(upstream);
      client.once("data", (chunk) => {
        if (/^GET [^\r\n]*\r\n/.test(chunk.toString("latin1")) && /upgrade: websocket/i.test(chunk.toString("latin1"))) this.upgrades++;
      });
      client.pipe(upstream).pipe(client);
      const end = () => { client.destroy(); upstream.destroy(); this.sockets.delete(client); this.sockets.delete(upstream); };
      client.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    if (typeof address !== "object" || !address) throw new Error("proxy has no address");
    return `http://127.0.0.1:${address.port}`;
  }

  /** Destroys every open connection; new ones are accepted again right away. */
  drop(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  async close(): Promise<void> {
    this.drop();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
