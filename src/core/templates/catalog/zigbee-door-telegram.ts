import { doorOpened, base, type BuiltinTemplate } from "./types";

/** The Telegram step is Activepieces' Telegram bot piece (docs/activepieces.md); the door is Zigbee2MQTT's (docs/pieces/mqtt.md). */
export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000018",
  slug: "zigbee-door-telegram",
  name: "Door opened → Telegram (Zigbee2MQTT, Telegram bot)",
  description:
    "When a Zigbee2MQTT door sensor reports the door open, send a message through your Telegram bot. Install the Activepieces package @activepieces/piece-telegram-bot first (Settings → Integrations); choose your MQTT connection on the trigger and a Telegram bot connection (the bot token from @BotFather) on the message; set variables.telegramChatId",
  category: "home",
  packages: ["@activepieces/piece-telegram-bot"],
  definition: base(
    doorOpened({
      name: "telegram",
      displayName: "Message me on Telegram",
      type: "PIECE",
      pieceId: "ap-telegram-bot",
      actionId: "send_text_message",
      config: { chat_id: "{{variables.telegramChatId}}", message: "{{trigger.body.device}} opened" },
    }),
    { variables: { telegramChatId: "123456789" } },
  ),
} satisfies BuiltinTemplate;
