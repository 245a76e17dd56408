/**
 * SQLite's numbered migrations, applied in order. Add a file and one line here, and the same version in
 * ../../postgres/migrations/; never edit a shipped one.
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

export const migrations: Migration[] = [
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
].sort((a, b) => a.version - b.version);
