/**
 * The built-in catalog, one folder per piece. Add a piece by importing its folder here.
 * A factory, so every registry gets its own list (tests may register extra pieces freely).
 */
import type { PieceDef } from "../src/pieces-sdk/types";
import data from "./data";
import schedule from "./schedule";
import text from "./text";
import webhook from "./webhook";

export function builtinPieces(): PieceDef[] {
  return [data, schedule, text, webhook];
}
