import { aRunFailed, base, type BuiltinTemplate, phoneVariables, pushToPhone } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000010",
  slug: "failed-run-to-phone",
  name: "Failed run → phone (ntfy)",
  description:
    "When any production run fails, push a notification to your phone through ntfy (ntfy.sh or your own server). Set variables.ntfyServer and variables.ntfyTopic",
  category: "notifications",
  definition: base(
    aRunFailed(
      pushToPhone({
        title: "Weft: {{trigger.run.workflowName}} failed",
        message: "{{trigger.run.errorMessage}}",
        priority: "high",
        tags: ["warning"],
      }),
    ),
    phoneVariables("my-weft-alerts"),
  ),
} satisfies BuiltinTemplate;
