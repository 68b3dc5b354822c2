import type { ErrorInfo, PlacedTool } from "@aexhq/brain-protocol";
import type { CallHandle, CallInvocation, CallSink, Environment } from "../../dispatch/environment.ts";
import { BrainRuntimeError } from "../../errors.ts";
import { HttpJsonInterpreter, parseHttpJsonConfig } from "./http-json.ts";
import type { HttpJsonEnvironmentConfig } from "./http-json.ts";

/** What the operator may define under a name (only http_json so far). */
export type DescriptorEnvironmentConfig = HttpJsonEnvironmentConfig;

/** One named descriptor Environment: it interprets descriptors of one `type`. */
export interface DescriptorInterpreter {
  readonly type: string;
  /** Why this descriptor cannot run here (admission), or undefined. */
  check(descriptor: Record<string, unknown>, tool: PlacedTool): string | undefined;
  start(call: CallInvocation, descriptor: Record<string, unknown>, sink: CallSink): CallHandle;
  /** Server close: abort in-flight work without ending the calls (recovery ends them `unknown`). */
  close(): void;
}

type DescriptorPlacement = Extract<PlacedTool["placement"], { kind: "descriptor" }>;

// The same names the SDK's brainEnv accepts, so every defined environment can be referred to.
const ENV_NAME = /^[a-zA-Z0-9._:-]{1,128}$/;

/**
 * Checks the operator's definitions (startBrain's `descriptorEnvironments`, the CLI's
 * BRAIN_HTTP_ENVIRONMENTS); `source` names where they came from in every message. Header values
 * and URLs are never echoed: they may hold credentials.
 */
export function parseDescriptorEnvironments(value: unknown, source: string): Record<string, DescriptorEnvironmentConfig> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new BrainRuntimeError("invalid_request", `${source} must be an object mapping environment names to definitions like {"type":"http_json","baseUrl":"https://..."}`);
  }
  const out: Record<string, DescriptorEnvironmentConfig> = {};
  for (const [name, def] of Object.entries(value)) {
    if (!ENV_NAME.test(name)) throw new BrainRuntimeError("invalid_request", `${source} must name environments with 1-128 letters, digits, ".", "_", ":" or "-", got ${JSON.stringify(name)}`);
    const where = `${source}.${name}`;
    const type = (def as { type?: unknown } | null)?.type;
    if (type !== "http_json") throw new BrainRuntimeError("invalid_request", `${where}.type must be "http_json" (the only descriptor environment this runtime has), got ${JSON.stringify(type)}`);
    out[name] = parseHttpJsonConfig(def, where);
  }
  return out;
}

/**
 * Descriptor tools: the application places a tool with an opaque descriptor and the name of an
 * Environment; the operator defines that Environment (its type, endpoint and credentials), so
 * credentials never travel from the application. Admission checks the descriptor against the
 * named Environment; each invoke hands the descriptor to it again.
 */
export class DescriptorEnvironment implements Environment {
  readonly kind = "descriptor" as const;
  private readonly interpreters = new Map<string, DescriptorInterpreter>();

  constructor(definitions: Readonly<Record<string, DescriptorEnvironmentConfig>>) {
    for (const [name, config] of Object.entries(parseDescriptorEnvironments(definitions, "descriptorEnvironments"))) {
      this.interpreters.set(name, new HttpJsonInterpreter(name, config));
    }
  }

  admit(tool: PlacedTool): ErrorInfo | undefined {
    const found = this.resolve(tool);
    return "code" in found ? found : undefined;
  }

  start(call: CallInvocation, sink: CallSink): CallHandle {
    // Checked again: after a restart the operator may have changed or removed the environment.
    const found = this.resolve(call.tool);
    if ("code" in found) throw BrainRuntimeError.of(found);
    return found.interpreter.start(call, found.descriptor, sink);
  }

  private resolve(tool: PlacedTool): ErrorInfo | { interpreter: DescriptorInterpreter; descriptor: Record<string, unknown> } {
    const p = tool.placement as DescriptorPlacement;
    if (p.kind !== "descriptor") return { code: "invalid_request", message: "not a descriptor placement" };
    const name = tool.contract.name;
    const interpreter = this.interpreters.get(p.env);
    if (interpreter === undefined) {
      // Only the requested name: the operator's other environments are not the application's business.
      return {
        code: "unsupported",
        message: `this runtime does not run the descriptor environment ${JSON.stringify(p.env)} (tool ${name}): the operator defines descriptor environments (BRAIN_HTTP_ENVIRONMENTS)`,
        details: { tool: name, env: p.env },
      };
    }
    const d = p.descriptor;
    if (d === null || typeof d !== "object" || Array.isArray(d) || typeof (d as { type?: unknown }).type !== "string") {
      return { code: "invalid_request", message: `tool ${name}: its descriptor for environment ${p.env} must be an object with a string "type"`, details: { tool: name, env: p.env } };
    }
    const descriptor = d as Record<string, unknown>;
    if (descriptor.type !== interpreter.type) {
      return {
        code: "unsupported",
        message: `environment ${p.env} interprets "${interpreter.type}" descriptors, not ${JSON.stringify(descriptor.type)} (tool ${name})`,
        details: { tool: name, env: p.env, type: descriptor.type as string },
      };
    }
    const problem = interpreter.check(descriptor, tool);
    if (problem !== undefined) return { code: "invalid_request", message: `tool ${name}: its ${interpreter.type} descriptor for environment ${p.env} ${problem}`, details: { tool: name, env: p.env } };
    return { interpreter, descriptor };
  }

  close(): void {
    for (const i of this.interpreters.values()) i.close();
  }
}
