/** Backups the server writes (GET and POST /api/backups; docs/operations.md, "Scheduled backups"). */
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { DateTime } from "./common";

export const BackupFile = t.Object({
  name: t.String({ description: "the file's name in the backup folder: weft-<UTC time>.db, or weft-schema-N-before-M-<UTC time>.db" }),
  bytes: Type.Integer({ minimum: 0 }),
  createdAt: DateTime,
  kind: t.Union([t.Literal("backup"), t.Literal("before-upgrade")], {
    description: "backup: scheduled or asked for, the newest WEFT_BACKUP_KEEP kept; before-upgrade: written before migrations, never pruned",
  }),
});

export const BackupOverview = t.Object({
  available: t.Boolean({ description: "false on PostgreSQL, which Weft does not copy (pg_dump backs it up)" }),
  schedule: t.Union([t.String(), t.Null()], { description: "WEFT_BACKUP_SCHEDULE, a cron pattern; null without one" }),
  next: t.Union([DateTime, t.Null()], { description: "the schedule's next backup; null without one" }),
  keep: Type.Integer({ minimum: 1, description: "WEFT_BACKUP_KEEP: how many backups are kept" }),
  dir: t.String({ description: "WEFT_BACKUP_DIR, the folder on the server" }),
  backups: t.Array(BackupFile, { description: "newest first" }),
});
