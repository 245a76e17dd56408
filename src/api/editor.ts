/**
 * Editor internals (docs/api.md "Everything else"): test payloads and pinned step data, stored outside the
 * definition.
 */
import { Elysia, t } from "elysia";
import type { AppDeps } from "./deps";
import { Data, IdParams } from "../schema/common";
import { PinBody, PinnedEntry, StepNameParams, TestPayloadsBody } from "../schema/workflow-record";

const tags = ["Editor Internals"];

export const editorApi = ({ security, workflows }: AppDeps) =>
  new Elysia({ name: "api-editor" })
    .use(security)
    .get("/api/workflows/:id/test-payloads", async ({ auth, params }) => ({ data: await workflows.editor.testPayloads(auth.workspaceId, params.id) }), {
      permission: "workflow:read",
      params: IdParams,
      response: Data(t.Record(t.String(), t.Any())),
      detail: { tags, summary: "Read the workflow's named test payloads (trigger inputs for test runs)" },
    })
    .put("/api/workflows/:id/test-payloads", async ({ auth, params, body }) => ({ data: await workflows.editor.setTestPayloads(auth, params.id, body) }), {
      permission: "workflow:write",
      params: IdParams,
      body: TestPayloadsBody,
      response: Data(t.Record(t.String(), t.Any())),
      detail: { tags, summary: "Replace the workflow's test payloads (not part of the definition; no definitionRev change)" },
    })
    .put(
      "/api/workflows/:id/pinned-data/:stepName",
      async ({ auth, params, body }) => ({ data: await workflows.editor.pin(auth, params.id, params.stepName, body.data) }),
      {
        permission: "workflow:write",
        params: StepNameParams,
        body: PinBody,
        response: Data(t.Composite([t.Object({ stepName: t.String() }), PinnedEntry])),
        detail: { tags, summary: "Pin a step's output; it reads stale: true once the step's configuration changes" },
      },
    )
    .delete(
      "/api/workflows/:id/pinned-data/:stepName",
      async ({ auth, params }) => ({ data: await workflows.editor.unpin(auth, params.id, params.stepName) }),
      {
        permission: "workflow:write",
        params: StepNameParams,
        response: Data(t.Object({ stepName: t.String(), deleted: t.Boolean() })),
        detail: { tags, summary: "Remove a step's pinned output" },
      },
    );
