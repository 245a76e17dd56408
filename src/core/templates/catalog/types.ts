/** A built-in template: a ready definition in the shape of spec 2.3, shipped in the binary. */
import type { FlowVersionT } from "../../../schema/workflow";

export interface BuiltinTemplate {
  /** Fixed, so links and scripts keep working across releases. */
  id: string;
  slug: string;
  name: string;
  description: string;
  category: "webhooks" | "schedules" | "errors" | "approvals" | "polling" | "forms" | "sub-flows" | "data" | "notifications";
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
