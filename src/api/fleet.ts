/** The fleet registry: which `weft serve` processes share this database, their heartbeat and their pieces. */
import { Elysia, t } from "elysia";
import type { AppDeps } from "./deps";
import { Data } from "../schema/common";
import { FleetInstance } from "../schema/fleet";

const tags = ["Settings"];

export const fleetApi = ({ security, fleet }: AppDeps) =>
  new Elysia({ name: "api-fleet" }).use(security).get("/api/fleet", async () => ({ data: await fleet.list() }), {
    permission: "workspace:admin",
    response: Data(t.Array(FleetInstance)),
    detail: {
      tags,
      summary:
        "The Weft instances on this database (one on SQLite; several sharing a PostgreSQL database): host, pid, version, role, last heartbeat, whether it is alive, and the pieces and versions each can run",
    },
  });
