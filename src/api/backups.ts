/** Backups for the instance owner: the scheduled folder and a backup now (docs/operations.md, "Scheduled backups"). */
import { Elysia } from "elysia";
import type { AppDeps } from "./deps";
import { created, routeOptions } from "./route-options";
import { BackupFile, BackupOverview } from "../schema/backups";

const route = routeOptions(["Settings"]);

export const backupsApi = ({ security, backups }: AppDeps) =>
  new Elysia({ name: "api-backups" })
    .use(security)
    .get("/api/backups", async ({ auth }) => ({ data: await backups.overview(auth) }), {
      permission: "workspace:admin",
      ...route.answer(
        BackupOverview,
        "The backups in the backup folder, newest first (scheduled, asked for, and those written before upgrades), with the schedule and how many are kept (instance owner only)",
      ),
    })
    .post("/api/backups", async ({ auth, set }) => created(set, await backups.createFor(auth)), {
      permission: "workspace:admin",
      ...route.creates(
        BackupFile,
        "Write a backup of the database now (no body) into the backup folder (instance owner only; SQLite: on PostgreSQL 422, use pg_dump). The oldest beyond WEFT_BACKUP_KEEP are removed",
      ),
      idempotent: false,
    });
