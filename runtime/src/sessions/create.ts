import type { CreateSessionRequest, Placement, SessionCreatedRecord } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import type { Environment } from "../dispatch/environment.ts";
import { contractDigest } from "../hosts/digest.ts";
import { refuseModel } from "../models/select.ts";
import type { ModelSettings } from "../models/select.ts";

/**
 * What a new session must satisfy before any Environment is asked to admit a tool, checked from
 * the request alone: a model the runtime may use, tool names placed once, digests that match their
 * schemas, an Environment for every placement kind, and a scripted model naming only placed tools.
 * Throws the first problem as a typed error (`invalid_request`, `unsupported`, …); nothing is taken.
 */
export function checkNewSession(req: CreateSessionRequest, models: ModelSettings, environment: (kind: Placement["kind"]) => Environment | undefined): void {
  const refused = refuseModel(req.model, models);
  if (refused) throw refused;
  const names = new Set<string>();
  for (const t of req.tools) {
    if (names.has(t.contract.name)) throw new BrainRuntimeError("invalid_request", `tool ${t.contract.name} is placed twice`);
    names.add(t.contract.name);
    const digest = contractDigest(t.contract);
    if (digest !== t.contract.digest) throw new BrainRuntimeError("invalid_request", `tool ${t.contract.name}: digest ${t.contract.digest} does not match its schemas (expected ${digest})`);
    if (environment(t.placement.kind) === undefined) {
      throw new BrainRuntimeError("unsupported", `this runtime does not run the ${t.placement.kind} environment (tool ${t.contract.name})`, { tool: t.contract.name, placement: t.placement.kind });
    }
  }
  if (req.model.provider === "scripted") {
    req.model.script.forEach((step, i) => {
      for (const c of step.toolCalls ?? []) {
        if (!names.has(c.name)) throw new BrainRuntimeError("invalid_request", `script step ${i + 1} calls tool ${c.name}, which is not placed in this session`);
      }
    });
  }
}

/** The session.created record's data for a request; `owner` is the API key creating it (absent: the operator token). */
export function createdData(req: CreateSessionRequest, owner: string | undefined): SessionCreatedRecord["data"] {
  const data: SessionCreatedRecord["data"] = { model: req.model, tools: req.tools };
  if (owner !== undefined) data.owner = owner;
  if (req.system !== undefined) data.system = req.system;
  if (req.deadlineMs !== undefined) data.deadlineMs = req.deadlineMs;
  return data;
}
