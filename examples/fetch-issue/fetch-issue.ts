// The spec's descriptor example: the tool says what to call, the `github` Environment (defined by
// the Brain server's operator) says where and with which credentials.
import { tool } from "@aexhq/brain";
import { z } from "zod";

export const fetchIssue = tool({
  name: "fetch_issue",
  description: "Fetch one issue.",
  input: z.object({ number: z.number().int() }),
  options: z.object({ repository: z.string() }),
  implementation: ({ repository }) => ({
    type: "http_json",
    method: "GET",
    path: `/repos/${repository}/issues/{number}`,
  }),
});
