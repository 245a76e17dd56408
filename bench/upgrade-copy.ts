/**
 * What an upgrade costs a large SQLite database before its migrations run (docs/operations.md, "Upgrades"): every
 * start that finds pending migrations first writes a copy of the database to backups/ (`VACUUM INTO`, the same
 * copy `weft backup` writes), and no copy means no upgrade. For a history of N runs (bench/history.ts's seeding: a
 * real server's workflows, N finished runs with their steps), this bench times `migrate` with the shipped
 * migrations plus one that does nothing, so the figure is the copy and the one transaction, as a user's first
 * start of a newer version pays it when the new migrations are small; beside it a plain file copy (the disk's
 * floor) and the sizes.
 *
 *   WEFT_BENCH_UPGRADE_RUNS=1000000 bun bench/upgrade-copy.ts      (default 1,000,000)
 */
import { copyFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { acquireDataDirLock } from "../src/store/data-dir-lock";
import { migrations } from "../src/store/sqlite/migrations";
import { migrate, openDatabase } from "../src/store/sqlite/db";
import { machine } from "./_support";
import { prepareDataDir, seedRuns } from "./history";

const runs = Number(process.env.WEFT_BENCH_UPGRADE_RUNS ?? 1_000_000);
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

console.log(`${machine()}; upgrade copy of a history of ${runs.toLocaleString("en")} runs`);
const { dataDir } = await prepareDataDir();
try {
  const seeded = seedRuns(dataDir, runs, { tagShare: 0.1 });
  console.log(`seeded ${seeded.runs.toLocaleString("en")} runs in ${(seeded.ms / 1000).toFixed(1)} s`);
  const file = join(dataDir, "weft.db");
  const lock = acquireDataDirLock(dataDir);
  const db = openDatabase(file);
  try {
    // Everything in the WAL is in the file, as after a clean stop.
    db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    const bytes = statSync(file).size;
    const floorStarted = performance.now();
    copyFileSync(file, `${file}.plain-copy`);
    const floorMs = performance.now() - floorStarted;
    rmSync(`${file}.plain-copy`);
    const latest = migrations.at(-1)!.version;
    let copy: string | undefined;
    const started = performance.now();
    migrate(db, (upgrade) => (copy = upgrade.backup), [...migrations, { version: latest + 1, name: "bench-nothing", sql: "SELECT 1" }]);
    const ms = performance.now() - started;
    const copied = copy ? statSync(copy).size : 0;
    console.log(`database ${mib(bytes)}; plain file copy ${floorMs.toFixed(0)} ms (${mib((bytes / floorMs) * 1000)}/s)`);
    console.log(
      `upgrade with its copy before it: ${ms.toFixed(0)} ms for ${mib(copied)} written (${mib((copied / ms) * 1000)}/s), ${(ms / floorMs).toFixed(1)} × the plain copy`,
    );
  } finally {
    db.close();
    lock.release();
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
