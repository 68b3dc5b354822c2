import { BrainRuntimeError } from "../../errors.ts";
import type { Logger } from "../../logger.ts";
import type { McpServerConfig } from "./config.ts";
import { DEFAULT_INITIALIZE_TIMEOUT_MS } from "./config.ts";
import { loadWire, WireError } from "./wire-types.ts";
import type { WireConnection, WireTarget, WireTool } from "./wire-types.ts";

// stderr lines kept to explain a server that would not start.
const STDERR_LINES = 5;

/**
 * One operator-defined MCP server as the runtime holds it: connected on first use (admission or a
 * call), its tool list cached until it says the list changed or the connection ends, and, when a
 * stdio process dies or a connection ends, connected again (a new process) for the next use.
 * Calls in flight on a connection that ends are the caller's to report (`unknown`); nothing is
 * re-sent on the new one.
 */
export class McpServer {
  private conn: Promise<WireConnection> | undefined;
  private list: Promise<WireTool[]> | undefined;
  // What `conn` and `list` resolved to, while they stand: a call takes them without waiting.
  private connNow: WireConnection | undefined;
  private listNow: WireTool[] | undefined;
  private readyNow: { readonly conn: WireConnection; readonly tools: WireTool[] } | undefined;
  private closed = false;
  private readonly stderr: string[] = [];

  constructor(
    readonly name: string,
    private readonly config: McpServerConfig,
    private readonly logger: Logger,
    private readonly version: string,
  ) {}

  get initializeTimeoutMs(): number {
    return this.config.initializeTimeoutMs ?? DEFAULT_INITIALIZE_TIMEOUT_MS;
  }

  /**
   * A request on `conn` could not be sent (Streamable HTTP: the server answered the POST with an
   * HTTP error, such as 404 for a session it no longer knows after a restart, or could not be
   * reached). Over HTTP no connection ends to say so: drop this one, so the next use connects (and
   * initializes) again. Calls still open on it end `unknown`, as for a process that exited.
   */
  broken(conn: WireConnection): void {
    // Forgotten at once, not when the close completes: a call sent again right after (see
    // McpEnvironment.send) must get a new connection, not this one.
    if (this.connNow === conn) {
      this.conn = undefined;
      this.connNow = undefined;
      this.list = undefined;
      this.listNow = undefined;
      if (!this.closed) this.logger.warn("MCP server connection dropped after a failed request; it is connected again for the next call", { server: this.name });
    }
    void conn.close();
  }

  /** The live connection, connecting (starting the process) when there is none. Rejects `unavailable`. */
  connection(): Promise<WireConnection> {
    if (this.closed) return Promise.reject(new BrainRuntimeError("unavailable", `MCP server ${this.name}: the runtime is closing`, { server: this.name }));
    if (this.conn === undefined) {
      const started = this.open();
      this.conn = started;
      this.connNow = undefined;
      started.then(
        (c) => {
          if (this.conn === started) this.connNow = c;
          c.onClosed((why) => {
            if (this.conn !== started) return;
            this.conn = undefined;
            this.connNow = undefined;
            this.list = undefined;
            this.listNow = undefined;
            if (!this.closed) this.logger.warn("MCP server connection ended; it is connected again for the next call", { server: this.name, reason: why });
          });
        },
        () => {
          // Not kept: the next use tries again (the failure was reported to this use).
          if (this.conn === started) this.conn = undefined;
        },
      );
    }
    return this.conn;
  }

  private async open(): Promise<WireConnection> {
    const c = this.config;
    const target: WireTarget = "url" in c ? { kind: "http", url: c.url, headers: c.headers ?? {} } : { kind: "stdio", command: c.command, args: c.args ?? [], env: c.env ?? {}, cwd: c.cwd };
    this.stderr.length = 0;
    // The MCP SDK is loaded with the first server that connects (a missing package is said as it is).
    const { connect } = await loadWire(this.name);
    try {
      const conn = await connect(target, {
        timeoutMs: this.initializeTimeoutMs,
        clientName: "brain",
        clientVersion: this.version,
        onStderr: (line) => {
          this.stderr.push(line);
          if (this.stderr.length > STDERR_LINES) this.stderr.shift();
          this.logger.debug("MCP server stderr", { server: this.name, line });
        },
      });
      conn.onToolsChanged(() => {
        this.list = undefined;
        this.listNow = undefined;
      });
      return conn;
    } catch (e) {
      const why =
        e instanceof WireError && e.reason === "timeout"
          ? `did not answer initialize within ${this.initializeTimeoutMs} ms${e.message.includes("; the transport reported: ") ? ` (${e.message.slice(e.message.indexOf("the transport reported: "))})` : ""}`
          : e instanceof WireError && e.reason === "malformed"
            ? "answered initialize with something that is not an MCP result"
            : `could not be started or reached (${e instanceof Error ? e.message : String(e)})`;
      // The process may have said why before it exited.
      await new Promise((r) => setTimeout(r, 20));
      const tail = this.stderr.length > 0 ? `; its stderr ended with: ${this.stderr.join(" | ")}` : "";
      throw new BrainRuntimeError("unavailable", `MCP server ${this.name} ${why}${tail}`, { server: this.name }, true, { cause: e });
    }
  }

  /** The server's tools (cached). Rejects `unavailable` when it cannot be reached or will not list them. */
  tools(): Promise<WireTool[]> {
    if (this.list === undefined) {
      const listed = this.connection().then(async (c) => {
        try {
          return await c.listTools(this.initializeTimeoutMs);
        } catch (e) {
          throw new BrainRuntimeError("unavailable", `MCP server ${this.name} did not list its tools: ${e instanceof Error ? e.message : String(e)}`, { server: this.name }, true, { cause: e });
        }
      });
      this.list = listed;
      this.listNow = undefined;
      listed.then(
        (tools) => {
          if (this.list === listed) this.listNow = tools;
        },
        () => {
          if (this.list === listed) this.list = undefined;
        },
      );
    }
    return this.list;
  }

  /** The live connection and the tools listed on it when both are at hand (no waiting), else undefined. */
  ready(): { readonly conn: WireConnection; readonly tools: WireTool[] } | undefined {
    if (this.connNow === undefined || this.listNow === undefined || this.closed) return undefined;
    // One object while both stand, not one per call.
    const r = this.readyNow;
    if (r !== undefined && r.conn === this.connNow && r.tools === this.listNow) return r;
    return (this.readyNow = { conn: this.connNow, tools: this.listNow });
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.conn;
    this.conn = undefined;
    this.connNow = undefined;
    if (c !== undefined) await c.then((x) => x.close()).catch(() => undefined);
  }
}
