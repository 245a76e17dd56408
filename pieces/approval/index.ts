/** Approval: pause the run until someone opens the approve or reject link. */
import { action, definePiece, Property } from "../../src/pieces-sdk";

export default definePiece({
  id: "approval",
  name: "Approval",
  version: "1.0.0",
  icon: "✋",
  description: "Pause a run until a person approves or rejects it",
  actions: [
    action({
      id: "wait_for_approval",
      name: "Wait for approval",
      description: "Pauses the run and outputs approve/reject links (send them with a later-added or earlier step); continues with the decision",
      sideEffects: "write",
      props: {
        message: Property.longText({ displayName: "Message", description: "Shown with the links, e.g. what is being approved" }),
        expires_in_hours: Property.number({
          displayName: "Expires after (hours)",
          description: "Continue as expired when nobody decides in time; empty = never",
          min: 0.01,
          max: 8784,
        }),
      },
      outputSchema: {
        type: "object",
        properties: {
          approved: { type: "boolean", required: true },
          decision: { type: "string", enum: ["approve", "reject", "expired"] },
          decidedAt: { type: "string", format: "date-time" },
        },
      },
      sampleData: { approved: true, decision: "approve", decidedAt: "2025-01-06T09:30:00.000Z" },
      run: (ctx) => {
        const resumed = ctx.resumePayload;
        if (resumed !== undefined) {
          const decision = resumed.decision === "approve" || resumed.decision === "reject" ? resumed.decision : "expired";
          return { ...resumed, approved: decision === "approve", decision, decidedAt: new Date().toISOString() };
        }
        const urls = ctx.resumeUrls(["approve", "reject"]);
        const hours = ctx.config.expires_in_hours;
        let resumeAt: string | undefined;
        if (hours !== undefined && hours !== null && hours !== "") {
          const n = Number(hours);
          if (!Number.isFinite(n) || n <= 0) throw new Error(`expires_in_hours ${JSON.stringify(hours)} must be a positive number of hours`);
          resumeAt = new Date(Date.now() + n * 3_600_000).toISOString();
        }
        return ctx.pause({
          mode: "webhook",
          ...(resumeAt ? { resumeAt } : {}),
          data: { message: String(ctx.config.message ?? ""), approveUrl: urls.approve, rejectUrl: urls.reject, ...(resumeAt ? { expiresAt: resumeAt } : {}) },
        });
      },
    }),
  ],
});
