import type { ModelConfig, ProviderModelConfig } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import { ModelCallError } from "./provider.ts";
import type { ModelProvider, ModelStreamEvent } from "./provider.ts";
import { ScriptedProvider } from "./scripted.ts";
import { OpenAIProvider } from "./openai.ts";
import { AnthropicProvider } from "./anthropic.ts";

/** How the operator reaches one real provider. Credentials live here, never in a session body. */
export interface ProviderSettings {
  apiKey?: string;
  /** The endpoint used when a session names none. */
  baseUrl?: string;
  /** Further endpoints a session may name in `model.baseUrl` (the key is sent to them too). */
  allowedBaseUrls?: string[];
}

export interface ModelSettings {
  openai?: ProviderSettings;
  anthropic?: ProviderSettings;
}

const DEFAULT_BASE_URL: Record<ProviderModelConfig["provider"], string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
};
const ENV_PREFIX: Record<ProviderModelConfig["provider"], string> = { openai: "OPENAI", anthropic: "ANTHROPIC" };

/** OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and BRAIN_MODEL_BASE_URLS (comma-separated, both providers). */
export function modelSettingsFromEnv(env: Record<string, string | undefined>): ModelSettings {
  const allowed = (env.BRAIN_MODEL_BASE_URLS ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
  const one = (p: ProviderModelConfig["provider"]): ProviderSettings => {
    const s: ProviderSettings = { allowedBaseUrls: allowed };
    const key = env[`${ENV_PREFIX[p]}_API_KEY`];
    const base = env[`${ENV_PREFIX[p]}_BASE_URL`];
    if (key) s.apiKey = key;
    if (base) s.baseUrl = base;
    return s;
  };
  return { openai: one("openai"), anthropic: one("anthropic") };
}

const normal = (url: string) => url.replace(/\/+$/, "");

/**
 * Why a session may not use this model, checked at creation: a real provider the operator has
 * not configured (no key and no endpoint) is `unsupported`; a `baseUrl` the operator did not allow
 * is `forbidden`, since the server would send its credentials there.
 */
export function refuseModel(config: ModelConfig, settings: ModelSettings): BrainRuntimeError | undefined {
  if (config.provider === "scripted") return undefined;
  const s = settings[config.provider];
  if (s === undefined || (s.apiKey === undefined && s.baseUrl === undefined)) {
    const env = ENV_PREFIX[config.provider];
    return new BrainRuntimeError("unsupported", `model provider ${config.provider} is not configured on this server (the operator sets ${env}_API_KEY, or ${env}_BASE_URL for a keyless endpoint)`);
  }
  if (config.baseUrl !== undefined) {
    const allowed = [s.baseUrl ?? DEFAULT_BASE_URL[config.provider], ...(s.allowedBaseUrls ?? [])].map(normal);
    if (!allowed.includes(normal(config.baseUrl))) {
      return new BrainRuntimeError("forbidden", `model.baseUrl ${config.baseUrl} is not an endpoint this server allows for ${config.provider} (BRAIN_MODEL_BASE_URLS)`);
    }
  }
  return undefined;
}

/** The session's provider. A config refused by today's settings (e.g. after a restart) fails each call with that refusal. */
export function providerFor(config: ModelConfig, settings: ModelSettings): ModelProvider {
  if (config.provider === "scripted") return new ScriptedProvider(config);
  const refused = refuseModel(config, settings);
  if (refused) return new RefusedProvider(config.provider, refused);
  const s = settings[config.provider]!;
  const options = { model: config.model, baseUrl: config.baseUrl ?? s.baseUrl ?? DEFAULT_BASE_URL[config.provider], apiKey: s.apiKey };
  return config.provider === "openai" ? new OpenAIProvider(options) : new AnthropicProvider(options);
}

class RefusedProvider implements ModelProvider {
  constructor(readonly name: string, private refusal: BrainRuntimeError) {}
  // eslint-disable-next-line require-yield
  async *stream(): AsyncIterable<ModelStreamEvent> {
    throw new ModelCallError(this.refusal.code, this.refusal.message);
  }
}
