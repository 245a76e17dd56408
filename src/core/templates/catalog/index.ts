/** The built-in template catalog, shipped in the binary. Add a template: one file here, one import below. */
import approvalFlow from "./approval-flow";
import callableSubflow from "./callable-subflow";
import dailyCheckBranch from "./daily-check-branch";
import errorNotification from "./error-notification";
import failedRunToPhone from "./failed-run-to-phone";
import feedToPhone from "./feed-to-phone";
import formToStore from "./form-to-store";
import orderLinesLoop from "./order-lines-loop";
import pollJsonStore from "./poll-json-store";
import scheduledDedupe from "./scheduled-dedupe";
import webhookTransformRespond from "./webhook-transform-respond";
import mqttToSql from "./mqtt-to-sql";
import emailToPhone from "./email-to-phone";
import summariseWithLlm from "./summarise-with-llm";
import zigbeeMotionLight from "./zigbee-motion-light";
import zigbeeDoorAwayPhone from "./zigbee-door-away-phone";
import zigbeeDoorTelegram from "./zigbee-door-telegram";
import type { BuiltinTemplate } from "./types";

export type { BuiltinTemplate };

export const BUILTIN_TEMPLATES: readonly BuiltinTemplate[] = [
  webhookTransformRespond,
  dailyCheckBranch,
  errorNotification,
  approvalFlow,
  pollJsonStore,
  scheduledDedupe,
  formToStore,
  callableSubflow,
  orderLinesLoop,
  failedRunToPhone,
  feedToPhone,
  emailToPhone,
  mqttToSql,
  summariseWithLlm,
  zigbeeMotionLight,
  zigbeeDoorAwayPhone,
  zigbeeDoorTelegram,
];
