import { base, type BuiltinTemplate } from "./types";

export default {
  id: "0b7d1a40-5e0f-4c1e-9a01-000000000007",
  slug: "form-to-store",
  name: "Hosted form → collect submissions",
  description: "Publish a web form at the workflow's URL; every submission is normalised and appended to a list in the store",
  category: "forms",
  definition: base({
    name: "trigger",
    displayName: "Contact form",
    type: "webhook",
    pieceId: "form",
    actionId: "form_submission",
    config: {
      title: "Contact us",
      fields: [
        { name: "name", label: "Your name", type: "text", required: true },
        { name: "email", label: "Email", type: "email", required: true },
        { name: "message", label: "Message", type: "textarea" },
      ],
      submit_label: "Send",
      success_message: "Thanks, we will be in touch.",
    },
    nextAction: {
      name: "clean",
      displayName: "Normalise",
      type: "PIECE",
      pieceId: "data",
      actionId: "set_fields",
      config: { fields: { name: "{{ $trim(trigger.body.name) }}", email: "{{ $lowercase(trigger.body.email) }}", message: "{{trigger.body.message}}" } },
      nextAction: {
        name: "save",
        displayName: "Keep the submission",
        type: "PIECE",
        pieceId: "store",
        actionId: "append",
        config: { key: "contact_submissions", value: "{{clean.output}}" },
      },
    },
  }),
} satisfies BuiltinTemplate;
