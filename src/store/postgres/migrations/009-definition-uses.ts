import { countUses } from "../../migration-sql";

/** SQLite's 009-definition-uses.ts on PostgreSQL, translated by the rules in ./index.ts. */
export default {
  version: 9,
  name: "definition-uses",
  sql: `
${countUses("BIGINT")}CREATE FUNCTION weft_definition_uses() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE run_definitions SET runs = runs + 1 WHERE hash = NEW.definition_hash;
  ELSE
    UPDATE run_definitions SET runs = runs - 1 WHERE hash = OLD.definition_hash;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER runs_definition_uses AFTER INSERT OR DELETE ON runs FOR EACH ROW EXECUTE FUNCTION weft_definition_uses();
`,
};
