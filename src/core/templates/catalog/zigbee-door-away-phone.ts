import { doorOpened, base, type BuiltinTemplate, phoneVariables, pushToPhone } from "./types";

/**
 * "Away" is the workspace store key away (true or false), set by another workflow's store step — for example
 * a webhook workflow that a phone or Home Assistant calls when you leave. docs/pieces/mqtt.md, "Zigbee2MQTT".
 */
export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000017",
  slug: "zigbee-door-away-phone",
  name: "Door opened while away → phone (Zigbee2MQTT)",
  description:
    "When a Zigbee2MQTT door sensor reports the door open (contact false) while the store key away is true, push it to your phone through ntfy. Choose your MQTT connection on the trigger; set variables.ntfyServer and ntfyTopic",
  category: "home",
  definition: base(
    doorOpened({
      name: "away",
      displayName: "Am I away?",
      type: "PIECE",
      pieceId: "store",
      actionId: "get",
      config: { key: "away", default_value: false },
      nextAction: {
        name: "route",
        displayName: "Away?",
        type: "ROUTER",
        branches: [
          {
            name: "away",
            conditions: [[{ field: "{{away.output.value}}", operator: "boolean_true" }]],
            firstAction: pushToPhone({ title: "Door opened", message: "{{trigger.body.device}} opened while you are away", priority: "high" }),
          },
        ],
      },
    }),
    phoneVariables("my-home"),
  ),
} satisfies BuiltinTemplate;
