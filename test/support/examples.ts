/**
 * The canonical example workflows. The repository carries a copy (test/fixtures/examples) so that a
 * fresh clone tests on its own; test/examples/examples.test.ts checks the copy against
 * ../shared/examples whenever that folder sits beside the checkout (as in CI).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const EXAMPLES_DIR = resolve(import.meta.dir, "../fixtures/examples");
export const SHARED_EXAMPLES_DIR = resolve(import.meta.dir, "../../../shared/examples");

export const example = (file: string) => JSON.parse(readFileSync(join(EXAMPLES_DIR, file), "utf8"));
