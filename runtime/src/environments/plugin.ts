import type { Placement } from "@aexhq/brain-protocol";
import type { JournalStore } from "../journal/store.ts";
import type { UploadShelf } from "../journal/shared-files.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { Dispatcher, HostBinding } from "../dispatch/dispatcher.ts";
import type { Environment, EnvironmentControlHandler } from "../dispatch/environment.ts";
import type { Route } from "../http/routes.ts";
import type { DescriptorEnvironmentConfig } from "./descriptor/environment.ts";
import type { McpServerConfig } from "./mcp/config.ts";
import type { HostEnvironment } from "./host.ts";
import type { Principal } from "../credentials/keys.ts";
import type { Logger } from "../logger.ts";

/**
 * One Environment (or a capability around them) added to a runtime at start. `startBrain` takes
 * them as an explicit list (`BrainOptions.environments`, default `defaultEnvironments()`) and
 * installs them in order, each with the same context; a new Environment is one more entry in that
 * list, with no change to server.ts. Nothing registers itself by being imported.
 */
export interface EnvironmentPlugin {
  /** Names it in errors and logs ("component", "managed", …). */
  readonly name: string;
  install(ctx: PluginContext): void | Promise<void>;
}

/**
 * Settings a plugin reads, resolved by startBrain from its options (and, for what the options
 * leave out, by config.ts from the process environment): a plugin never reads the environment.
 */
export interface EnvironmentSettings {
  /** The data folder; undefined for an in-memory journal (a plugin then uses a temp folder). */
  dataDir: string | undefined;
  /** Root under which session workspaces live (filesystem grants). */
  workspaceRoot: string | undefined;
  /** Whether the component Environment runs (BrainOptions.components). */
  components: boolean;
  /** Each component worker's memory cap, MiB (undefined: the default). */
  componentMemoryMb: number | undefined;
  /** Whether a component's telemetry lines are logged (at info). */
  componentTelemetry: boolean;
  /** Where jco transpilations are shared by digest between servers (undefined: not shared). */
  componentTranspileCache: string | undefined;
  /** The operator's named descriptor Environments, unchecked ({} when none). */
  descriptorEnvironments: Readonly<Record<string, DescriptorEnvironmentConfig>>;
  /** The operator's named MCP servers, unchecked ({} when none). */
  mcpServers: Readonly<Record<string, McpServerConfig>>;
  /** Origins HTTP tools may be served from. */
  httpToolOrigins: string[];
  /** The binaries Brain-managed hosts run on, the PATH their setup commands get, whether their stderr is logged, and how lockfile installs run. */
  managedHosts: ManagedHostSettings;
}

/** Brain-managed hosts: their binaries, PATH, logging, and how packages are prepared from their lockfile. */
export interface ManagedHostSettings {
  node: string;
  deno: string;
  path: string;
  log: boolean;
  /** The npm CLI that runs `npm ci` for a package uploaded with a lockfile and no node_modules (BRAIN_NPM). */
  npm: string;
  /** Where those installs fetch packages (BRAIN_MANAGED_REGISTRY); absent = npm's default registry. */
  registry?: string;
  /** npm's / Deno's download cache for those installs (BRAIN_MANAGED_CACHE); absent = one per binding folder. */
  cache?: string;
  /** Run the dependencies' lifecycle scripts while installing (BRAIN_MANAGED_INSTALL_SCRIPTS); off by default. */
  installScripts: boolean;
}

/** What a plugin is given: its settings and the few runtime parts an Environment works with. */
export interface PluginContext {
  readonly settings: EnvironmentSettings;
  readonly logger: Logger;
  /** The journal's kind ("postgres": one node of several; state kept per node must say so). */
  readonly storeKind: JournalStore["kind"];
  /** Several nodes: where uploads (components, packages) are kept for every node; undefined on one node. */
  readonly uploads?: UploadShelf;
  /** Serves placements of `kind` with `env` (one Environment per kind). */
  provide(kind: Placement["kind"], env: Environment): void;
  /** The Environment serving `kind`, if any. */
  environment(kind: Placement["kind"]): Environment | undefined;
  /** Handles ctx.environments (Environment control) for host calls. */
  provideControl(handler: EnvironmentControlHandler): void;
  /** An HTTP route behind the API's authorization (it gets the request's principal). */
  route(route: Route): void;
  /** An HTTP route that authorizes its own requests (HTTP tool callbacks). */
  openRoute(route: Route): void;
  /** Runs when the runtime closes, after every Environment's own `close`; later installs' first. */
  onClose(fn: () => void | Promise<void>): void;
  /** Where applications reach this server (BrainOptions.publicUrl, else the listening URL once it listens). */
  publicUrl(): string;
  /** This server's own loopback URL, once it listens: where the host processes it starts connect. */
  localUrl(): string;
  readonly sessions: SessionManager;
  readonly dispatcher: Dispatcher;
  /** Connected host processes (Brain-managed hosts serve their calls through it). */
  readonly hosts: HostEnvironment;
  /** Register tokens of the host processes Brain starts (token → the principal they stand for). */
  readonly hostTokens: Map<string, Principal>;
  /** The binding (session and env) each host process Brain starts serves, by host id. */
  readonly hostBindings: Map<string, HostBinding>;
}

/** What startBrain's result exposes for tests and the bench: the parts, not a way to change them. */
export interface BrainInternals {
  store: JournalStore;
  sessions: SessionManager;
  dispatcher: Dispatcher;
  environments: ReadonlyMap<Placement["kind"], Environment>;
  hostTokens: ReadonlyMap<string, Principal>;
}
