/**
 * The SQLite migrations (../../sqlite/migrations) translated for PostgreSQL: same versions, names, file names,
 * tables, columns, nullability, defaults, keys, ON DELETE actions and indexes, so version N means the same
 * schema on both. Add a file here and one line below with every new SQLite migration; never edit a shipped one.
 *
 * Translation rules:
 * - TEXT is `TEXT COLLATE "C"`: SQLite compares text byte by byte (BINARY), so does "C"; the database's
 *   default collation (often en_US) would sort and compare differently, and its lower() would fold
 *   non-ASCII letters, which SQLite's does not.
 * - INTEGER is BIGINT (SQLite integers are 64-bit); the 0/1 flags (secret, output_truncated, managed_app,
 *   enabled) are INTEGER. Bun's SQL client returns BIGINT as a string (a BigInt with `bigint: true`),
 *   INTEGER as a number.
 * - JSON columns stay TEXT, so the text read back is the text written, byte for byte.
 * - `name COLLATE NOCASE` in the folders index is `lower(name)` on the "C" column: it folds A–Z only, like
 *   NOCASE. Queries that say `name = ? COLLATE NOCASE` / `ORDER BY name COLLATE NOCASE` on SQLite say
 *   `lower(name) = lower($n)` / `ORDER BY lower(name)` here (the index serves the first).
 * - run_steps has SQLite's implicit rowid made explicit (an identity column of that name): steps of one
 *   `seq` are read in insertion order by it. `SELECT *` on PostgreSQL therefore also returns it.
 * - WITHOUT ROWID (kv_entries) is a storage layout; a plain table with the same primary key behaves the same.
 *
 * Not equivalent:
 * - users.email (`COLLATE NOCASE` on the column, so `email = ?` and its UNIQUE ignore case) uses the ICU
 *   collation weft_nocase (case-insensitive, accent-sensitive; needs a server built with ICU, as Debian's
 *   and the official images are). For ASCII it matches NOCASE; unlike NOCASE it also folds non-ASCII case
 *   (É = é), treats canonically equivalent Unicode (precomposed é, e + U+0301) as equal, ignores ignorable
 *   code points (most C0 control characters), sorts linguistically, and rejects LIKE before PostgreSQL 18.
 * - SQLite accepts NULL in a PRIMARY KEY column that is not INTEGER and not declared NOT NULL (a legacy
 *   quirk, e.g. orgs.id); PostgreSQL refuses it. Weft never inserts a NULL key.
 * - PostgreSQL text cannot hold U+0000; SQLite's can. JSON.stringify writes it as \u0000, so JSON is unaffected.
 * - SQLite's flexible typing stores a value of the wrong type as given (text in an INTEGER column);
 *   PostgreSQL rejects it.
 */
import identity from "./001-identity";
import workflows from "./002-workflows";
import kvStore from "./003-kv-store";
import runs from "./004-runs";
import connections from "./005-connections";
import triggers from "./006-triggers";
import runListIndexes from "./007-run-list-indexes";
import runCounts from "./008-run-counts";
import definitionUses from "./009-definition-uses";
import networkRanges from "./010-network-ranges";
import instances from "./011-instances";
import runOwner from "./012-run-owner";
import leases from "./013-leases";
import idempotencyOwner from "./014-idempotency-owner";
import runCountDeltas from "./015-run-count-deltas";
import packedSteps from "./016-packed-steps";
import runDictionaries from "./017-run-dictionaries";
import compactRuns from "./018-compact-runs";
import compactRunsPostgres from "./019-compact-runs-postgres";
import runIdHash from "./020-run-id-hash";
import runSizes from "./021-run-sizes";
import durationIndex from "./022-duration-index";
import encryptionKeyCheck from "./023-encryption-key-check";
import runDurations from "./024-run-durations";
import runTagCounts from "./025-run-tag-counts";
import runSaving from "./026-run-saving";
import members from "./027-members";
import auditEvents from "./028-audit-events";
import sso from "./029-sso";
import secondFactor from "./030-second-factor";
import sessionDetails from "./031-session-details";
import gitSync from "./032-git-sync";
import ssoNames from "./033-sso-names";
import type { Migration } from "../../migration";

export const postgresMigrations: Migration[] = [
  identity,
  workflows,
  kvStore,
  runs,
  connections,
  triggers,
  runListIndexes,
  runCounts,
  definitionUses,
  networkRanges,
  instances,
  runOwner,
  leases,
  idempotencyOwner,
  runCountDeltas,
  packedSteps,
  runDictionaries,
  compactRuns,
  compactRunsPostgres,
  runIdHash,
  runSizes,
  durationIndex,
  encryptionKeyCheck,
  runDurations,
  runTagCounts,
  runSaving,
  members,
  auditEvents,
  sso,
  secondFactor,
  sessionDetails,
  gitSync,
  ssoNames,
];
