/** A built-in template: a ready definition (a FlowVersion, src/schema/workflow.ts), shipped in the binary. */
import type { FlowVersionT } from "../../../schema/workflow";

export interface BuiltinTemplate {
  /** Fixed, so links and scripts keep working across releases. */
  id: string;
  slug: string;
  name: string;
  description: string;
  /**
   * Activepieces packages its steps need, installed first (Settings → Integrations, or POST
   * /api/pieces/packages; docs/activepieces.md). Until then its steps name a piece this server does not serve.
   */
  packages?: string[];
  category: "webhooks" | "schedules" | "errors" | "approvals" | "polling" | "forms" | "sub-flows" | "data" | "notifications" | "home";
  definition: FlowVersionT;
}

export const base = (trigger: FlowVersionT["trigger"], extra: Partial<FlowVersionT> = {}): FlowVersionT => ({
  schemaVersion: 2,
  trigger,
  settings: {},
  variables: {},
  annotations: null,
  pinnedData: {},
  ...extra,
});

type Step = NonNullable<FlowVersionT["trigger"]["nextAction"]>;

/** The error workflows' trigger: a run of a workflow that names this one in settings.errorWorkflowId failed; then `next`. */
export const aRunFailed = (next: Step): FlowVersionT["trigger"] => ({
  name: "trigger",
  displayName: "A run failed",
  type: "error",
  pieceId: "runs",
  actionId: "on_error",
  config: { workflow_ids: [] },
  nextAction: next,
});

/** Zigbee2MQTT's front_door sensor reporting the door open (contact false; docs/pieces/mqtt.md, "Zigbee2MQTT"); then `next`. */
export const doorOpened = (next: Step): FlowVersionT["trigger"] => ({
  name: "trigger",
  displayName: "Door opened",
  type: "subscription",
  pieceId: "mqtt",
  actionId: "zigbee2mqtt_device",
  config: { base_topic: "zigbee2mqtt", device: "front_door", property: "contact", equals: false },
  nextAction: next,
});

/**
 * The "push to my phone" step of the notification templates: ntfy, its server and topic taken from the
 * workflow's variables ntfyServer and ntfyTopic (which `phoneVariables` sets), `fields` the title, message, ….
 */
export const pushToPhone = (fields: Record<string, unknown>): Step => ({
  name: "push",
  displayName: "Push to my phone",
  type: "PIECE",
  pieceId: "notify",
  actionId: "ntfy_send",
  config: { server_url: "{{variables.ntfyServer}}", topic: "{{variables.ntfyTopic}}", ...fields },
});

export const phoneVariables = (topic: string): Partial<FlowVersionT> => ({ variables: { ntfyServer: "https://ntfy.sh", ntfyTopic: topic } });
