import { base, type BuiltinTemplate } from "./types";

/** Zigbee2MQTT turns the light off itself after on_time seconds (its documented on_time attribute); docs/pieces/mqtt.md. */
export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000016",
  slug: "zigbee-motion-light",
  name: "Motion sensor → light on for 2 minutes (Zigbee2MQTT)",
  description:
    "When a Zigbee2MQTT motion sensor reports occupancy, turn a Zigbee light on for 2 minutes (Zigbee2MQTT's on_time turns it off). Choose your MQTT connection on both steps; set the two devices' friendly names",
  category: "home",
  definition: base({
    name: "trigger",
    displayName: "Motion",
    type: "subscription",
    pieceId: "mqtt",
    actionId: "zigbee2mqtt_device",
    config: { base_topic: "zigbee2mqtt", device: "hallway_motion", property: "occupancy", equals: true },
    nextAction: {
      name: "light_on",
      displayName: "Light on for 2 minutes",
      type: "PIECE",
      pieceId: "mqtt",
      actionId: "zigbee2mqtt_set",
      config: { base_topic: "zigbee2mqtt", device: "hallway_light", state: "ON", attributes: { on_time: 120 } },
    },
  }),
} satisfies BuiltinTemplate;
