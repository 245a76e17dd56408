/**
 * The publish gate's connection directory, read synchronously: the one read of the connections table not yet
 * on the storage port (./port.ts, `connections.choices` answers the same), because the gate
 * (src/core/workflows/validate.ts) is still synchronous. It goes when the workflows area moves onto the port
 * and the gate can await `choices`. Read-only: every write to the connections tables goes through the port.
 */
import type { Db } from "./db";

export class ConnectionDirectoryReader {
  private readonly q;

  constructor(db: Db) {
    this.q = db.query<{ id: string; name: string }, [string, string]>(
      "SELECT id, name FROM connections WHERE workspace_id = ? AND piece_id = ? ORDER BY name, id",
    );
  }

  /** Id and name of every connection of a piece in the workspace, by name. */
  choices(workspaceId: string, pieceId: string): Array<{ id: string; name: string }> {
    return this.q.all(workspaceId, pieceId);
  }
}
