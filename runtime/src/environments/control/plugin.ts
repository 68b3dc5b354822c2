import type { EnvironmentPlugin } from "../plugin.ts";
import type { ComponentEnvironment } from "../component/environment.ts";
import { EnvironmentControl } from "./control.ts";

/** ctx.environments (Environment control) for host calls: see control.ts. Installed after the component Environment it drives. */
export const environmentControlPlugin: EnvironmentPlugin = {
  name: "control",
  install(ctx) {
    const control = new EnvironmentControl({
      dispatcher: ctx.dispatcher,
      component: () => ctx.environment("component") as ComponentEnvironment | undefined,
    });
    ctx.provideControl(control.handle);
  },
};
