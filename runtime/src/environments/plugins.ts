import type { Placement } from "@aexhq/brain-protocol";
import type { JournalStore } from "../journal/store.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { Dispatcher, HostBinding } from "../dispatch/dispatcher.ts";
import type { Environment } from "../dispatch/environment.ts";
import type { Route } from "../http/routes.ts";
import type { DescriptorEnvironmentConfig } from "./descriptor/environment.ts";
import type { HostEnvironment } from "./host.ts";
import type { Principal } from "../credentials/keys.ts";

/** What an Environment plugged in at start can use (component and descriptor environments). */
export interface BrainInternals {
  store: JournalStore;
  dataDir: string | undefined;
  workspaceRoot: string | undefined;
  /** Whether the component environment is enabled (BrainOptions.components). */
  components: boolean;
  /** BrainOptions.descriptorEnvironments, unchecked ({} when absent). */
  descriptorEnvironments: Readonly<Record<string, DescriptorEnvironmentConfig>>;
  sessions: SessionManager;
  dispatcher: Dispatcher;
  environments: Map<Placement["kind"], Environment>;
  routes: Route[];
  /** Routes that authorize requests themselves (no operator token): HTTP tool callbacks. */
  openRoutes: Route[];
  /** BrainOptions.httpToolOrigins ([] when absent). */
  httpToolOrigins: string[];
  /** Where applications reach this server (BrainOptions.publicUrl, else the listening URL once it listens). */
  publicUrl: () => string;
  /** This server's own listening URL (loopback), once it listens: where the hosts it starts connect. */
  localUrl: () => string;
  /** Connected host processes (the Brain-managed hosts serve their calls through it). */
  hosts: HostEnvironment;
  /** Register tokens of the host processes Brain starts (token → the principal they stand for); the host channel accepts them besides the API's credentials. */
  hostTokens: Map<string, Principal>;
  /** The binding (session and env) each host process Brain starts serves, by host id: the host channel answers its calls' late frames. */
  hostBindings: Map<string, HostBinding>;
}

/** Hooks run before the server listens; the component environment registers itself here. */
export const environmentPlugins: Array<(internals: BrainInternals) => void | Promise<void>> = [];
