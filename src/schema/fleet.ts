/** The fleet registry (GET /api/fleet): the `weft serve` processes on this database and what they run. */
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { DateTime } from "./common";

export const FleetInstance = t.Object({
  id: t.String({ description: "the instance's id, new at each start" }),
  hostname: t.String(),
  // TypeBox's integer, as every other schema: Elysia's t.Integer is a string-coercing transform that compiles a
  // checker when defined (~7 ms of start-up, from source).
  pid: Type.Integer(),
  version: t.String({ description: "Weft's version" }),
  role: t.String({ description: "all: takes API calls, webhooks and runs" }),
  startedAt: DateTime,
  lastHeartbeatAt: DateTime,
  alive: t.Boolean({ description: "heard from within three heartbeat intervals (WEFT_HEARTBEAT_SECONDS, default 10)" }),
  self: t.Boolean({ description: "the instance answering this request" }),
  pieces: t.Array(t.Object({ id: t.String(), version: t.String() }), { description: "the pieces and versions it can run" }),
});
