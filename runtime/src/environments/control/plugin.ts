import { environmentPlugins } from "../plugins.ts";
import type { BrainInternals } from "../plugins.ts";
import type { ComponentEnvironment } from "../component/environment.ts";
import { EnvironmentControl } from "./control.ts";

/** Installs ctx.environments (Environment control) for host calls: see control.ts. */
export function installEnvironmentControl(internals: BrainInternals): EnvironmentControl {
  const control = new EnvironmentControl({
    dispatcher: internals.dispatcher,
    ownerOf: (sessionId) => internals.sessions.state(sessionId).created.owner,
    component: () => internals.environments.get("component") as ComponentEnvironment | undefined,
  });
  internals.dispatcher.environmentControl = control.handle;
  return control;
}

environmentPlugins.push((internals) => void installEnvironmentControl(internals));
