/**
 * Retention without a scan of the run history (issue 19): each stored definition counts the runs that point
 * at it, kept by triggers in the same transaction as every run insert and deletion, so the definitions no
 * run uses any more are found in the small definitions table (`runs = 0`) instead of by reading every run.
 * A run's definition never changes after its insert. Existing runs are counted once here (one pass).
 */
import { countUses } from "../../migration-sql";

export default {
  version: 9,
  name: "definition-uses",
  sql: `
${countUses("INTEGER")}CREATE TRIGGER run_definitions_used AFTER INSERT ON runs BEGIN
  UPDATE run_definitions SET runs = runs + 1 WHERE hash = NEW.definition_hash;
END;
CREATE TRIGGER run_definitions_released AFTER DELETE ON runs BEGIN
  UPDATE run_definitions SET runs = runs - 1 WHERE hash = OLD.definition_hash;
END;
`,
};
