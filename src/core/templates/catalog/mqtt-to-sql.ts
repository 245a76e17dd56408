import { base, type BuiltinTemplate } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000013",
  slug: "mqtt-to-sql",
  name: "MQTT reading → SQL table",
  description:
    "Store every reading a sensor publishes on MQTT as a row of a PostgreSQL, MySQL/MariaDB or SQLite table. Choose your MQTT and SQL connections on the two steps; the table needs the columns sensor and value",
  category: "data",
  definition: base({
    name: "trigger",
    displayName: "Sensor reading",
    type: "subscription",
    pieceId: "mqtt",
    actionId: "message_received",
    config: { topic: "home/+/temperature", qos: 1 },
    nextAction: {
      name: "put",
      displayName: "Add a row",
      type: "PIECE",
      pieceId: "sql",
      actionId: "insert_rows",
      config: { table: "readings", rows: [{ sensor: "{{trigger.body.topic}}", value: "{{trigger.body.payload.value}}" }] },
    },
  }),
} satisfies BuiltinTemplate;
