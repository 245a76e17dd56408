/** The W3C `traceparent` check (src/lib/traceparent.ts; docs/operations.md, "Traces"). */
import { expect, test } from "bun:test";
import { validTraceparent } from "../../src/lib/traceparent";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

test("a well-formed header is kept, lower-cased and trimmed", () => {
  expect(validTraceparent(`00-${TRACE}-${SPAN}-01`)).toBe(`00-${TRACE}-${SPAN}-01`);
  expect(validTraceparent(`  00-${TRACE.toUpperCase()}-${SPAN}-00 `)).toBe(`00-${TRACE}-${SPAN}-00`);
  // A later version is read as version 00, its extra fields dropped.
  expect(validTraceparent(`01-${TRACE}-${SPAN}-01-whatever`)).toBe(`00-${TRACE}-${SPAN}-01`);
});

test("anything else is ignored", () => {
  for (const bad of [
    undefined,
    null,
    "",
    "garbage",
    `ff-${TRACE}-${SPAN}-01`, // version ff is forbidden
    `00-${"0".repeat(32)}-${SPAN}-01`, // all-zero trace id
    `00-${TRACE}-${"0".repeat(16)}-01`, // all-zero parent id
    `00-${TRACE}-${SPAN}-01-extra`, // version 00 has exactly four fields
    `00-${TRACE.slice(1)}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}-1`,
    `00-${TRACE}-${SPAN}-01-${"x".repeat(600)}`,
  ]) {
    expect(validTraceparent(bad)).toBeUndefined();
  }
});
