/**
 * Readiness (GET /readyz): may a load balancer send this instance traffic now? Yes when its storage answers,
 * the database's schema is the one this build's migrations make, and the engine has started (the runs a restart
 * interrupted are recovered) and is not stopping. Liveness, "the process answers and its database too", is
 * /healthz. Each check says in words what is not ready, so a 503 explains itself.
 */
import type { Engine } from "../engine/engine";
import type { Storage } from "../store/port";

export interface ReadinessParts {
  /** The vital signs' port (on PostgreSQL connections of its own: a probe never queues behind busy requests). */
  storage: Pick<Storage, "schemaVersion">;
  engine: Pick<Engine, "state">;
}

export interface Readiness {
  ready: boolean;
  /** One entry per check: "ok", or what is not ready. */
  checks: { storage: string; migrations: string; engine: string };
  /** The checks that failed, in words (empty when ready). */
  notReady: string[];
}

export async function readiness(parts: ReadinessParts): Promise<Readiness> {
  const checks = { storage: "ok", migrations: "ok", engine: "ok" };
  try {
    const { version, latest } = await parts.storage.schemaVersion();
    if (version < latest) checks.migrations = `the database is at schema version ${version}; this weft needs ${latest} (run weft migrate)`;
    else if (version > latest) checks.migrations = `the database is at schema version ${version}, newer than this weft knows (${latest})`;
  } catch (error) {
    checks.storage = `the database does not answer: ${(error as Error)?.message ?? String(error)}`;
    checks.migrations = "unknown (the database does not answer)";
  }
  const state = parts.engine.state;
  if (state !== "started") {
    checks.engine = {
      "not started": "the engine has not started",
      starting: "the engine is starting (recovering the runs a restart interrupted)",
      stopping: "the engine is stopping (the server is shutting down)",
    }[state];
  }
  const notReady = Object.entries(checks)
    .filter(([, verdict]) => verdict !== "ok")
    .map(([name, verdict]) => `${name}: ${verdict}`);
  return { ready: notReady.length === 0, checks, notReady };
}
