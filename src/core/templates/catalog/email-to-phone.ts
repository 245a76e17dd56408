import { base, type BuiltinTemplate, phoneVariables, pushToPhone } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000014",
  slug: "email-to-phone",
  name: "New email → phone (ntfy)",
  description:
    "Push the sender and subject of each new unread mail to your phone through ntfy. Choose your email connection on the trigger; set variables.ntfyServer and ntfyTopic",
  category: "notifications",
  definition: base(
    {
      name: "trigger",
      displayName: "New email",
      type: "poll",
      pieceId: "email",
      actionId: "new_email",
      config: { folder: "INBOX", unseen_only: true, poll_interval_seconds: 120 },
      nextAction: pushToPhone({ title: "{{trigger.body.from.address}}", message: "{{trigger.body.subject}}" }),
    },
    phoneVariables("my-mail"),
  ),
} satisfies BuiltinTemplate;
