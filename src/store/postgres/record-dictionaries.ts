/**
 * Records and their dictionaries on PostgreSQL's run writer (../run-records.ts). The writer runs on the main
 * thread and talks to the database asynchronously, so it does not look dictionaries up: the first record of
 * each definition it packs becomes that definition's dictionary, and its first DICTIONARY_RECORDS records
 * together the next one, for the life of the process (each instance of a cluster has its own; a record names
 * the one it needs).
 *
 * A record must never reach the database without its dictionary. A group that packs a record against a
 * dictionary this writer has not seen committed carries the dictionary too (an upsert: whichever group
 * commits first stores it, the others refresh `seen_at`), so each group stands alone even when a batch is
 * retried group by group. Once a group carrying it committed, the dictionary counts as stored for an hour;
 * after that it is announced again, which keeps its `seen_at` within the hour while it is used. Deleting a
 * dictionary needs its definition gone and a day without announcement (../run-rows.ts, deleteOrphanDictionaries):
 * no record written meanwhile can need it.
 */
import type { AnnouncedDictionary, WireOp } from "../run-writes";
import { firstDictionary, type GrowingDictionary, growDictionary, packRecord, recordText, splitCold } from "../run-records";
import { RUN_INDEX } from "../run-rows";

/** How long a dictionary seen committed is used without being announced again. */
export const CONFIRMED_FOR_MS = 3_600_000;

const DEFINITION_HASH = RUN_INDEX.get("definition_hash")!;

export class RecordDictionaries {
  private readonly byDefinition = new Map<string, GrowingDictionary>();
  /** Dictionary id → when a group carrying it was seen committed (ms). */
  private readonly confirmed = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A group's ops with each finished run and its steps (op 8) as PostgreSQL's record insert (op 10). */
  compress(group: WireOp[]): WireOp[] {
    if (!group.some((op) => op[0] === 8)) return group;
    return group.map((op): WireOp => {
      if (op[0] !== 8) return op;
      const [, values, steps] = op;
      const { cold, row } = splitCold(values, RUN_INDEX);
      const text = recordText(cold, steps);
      const hash = String(values[DEFINITION_HASH]);
      let grown = this.byDefinition.get(hash);
      if (grown) growDictionary(grown, text);
      else {
        // A record too large to be a dictionary leaves the definition without one until a smaller record comes.
        grown = firstDictionary(text);
        if (this.byDefinition.size >= 10_000) this.byDefinition.clear();
        if (grown.dictionary) this.byDefinition.set(hash, grown);
      }
      const dictionary = grown.dictionary;
      const confirmedAt = dictionary ? this.confirmed.get(dictionary.id) : undefined;
      const announce =
        dictionary && (confirmedAt === undefined || this.now() - confirmedAt > CONFIRMED_FOR_MS)
          ? { id: dictionary.id, definitionHash: hash, bytes: dictionary.bytes }
          : null;
      return [10, row, packRecord(text, dictionary), announce];
    });
  }

  /** The dictionaries a committed group carried are stored. */
  committed(group: WireOp[]): void {
    for (const op of group) if (op[0] === 10 && op[3]) this.confirmed.set(op[3].id, this.now());
  }

  /** The dictionaries a group carries (tests). */
  static announced(group: WireOp[]): AnnouncedDictionary[] {
    return group.flatMap((op) => (op[0] === 10 && op[3] ? [op[3]] : []));
  }
}
