/**
 * The SDK's small shared readers (src/pieces-sdk/values.ts, docs/pieces.md "Writing a piece"): a dropdown's
 * labelled choices keep their order and show their labels in the projection, a list setting reads from an
 * array or comma-separated text, and an object setting from an object or JSON text, refused with the field's name.
 */
import { expect, test } from "bun:test";
import { jsonObjectOf, labelled, listOf, Property } from "../../src/pieces-sdk";

test("labelled choices keep the map's order and become the dropdown's values and labels", () => {
  const prop = Property.staticDropdown({ displayName: "State", default: "ON", options: labelled({ ON: "On", OFF: "Off", "": "(none: attributes only)" }) });
  expect(prop.enum).toEqual(["ON", "OFF", ""]);
  expect(prop.enumLabels).toEqual({ ON: "On", OFF: "Off", "": "(none: attributes only)" });
  expect(labelled({ "1": "InfluxDB 1.x", "2": "InfluxDB 2.x" })).toEqual([
    { label: "InfluxDB 1.x", value: "1" },
    { label: "InfluxDB 2.x", value: "2" },
  ]);
});

test("listOf reads an array or comma-separated text, dropping empty entries", () => {
  expect(listOf("bug, help wanted,, ")).toEqual(["bug", "help wanted"]);
  expect(listOf(["a", "", 3])).toEqual(["a", "3"]);
  expect(listOf(undefined)).toEqual([]);
  expect(listOf(42)).toEqual([]);
});

test("jsonObjectOf takes an object or JSON text, absent is {}, and anything else is refused naming the field", () => {
  expect(jsonObjectOf({ room: "kitchen" }, "tags", '{"room": "kitchen"}')).toEqual({ room: "kitchen" });
  expect(jsonObjectOf('{"value": 21.5}', "fields", '{"value": 21.5}')).toEqual({ value: 21.5 });
  expect(jsonObjectOf("", "data", "{}")).toEqual({});
  expect(jsonObjectOf(null, "data", "{}")).toEqual({});
  expect(() => jsonObjectOf("{oops", "target", '{"entity_id": "light.kitchen"}')).toThrow(
    'target must be a JSON object, e.g. {"entity_id": "light.kitchen"}; got {oops',
  );
  expect(() => jsonObjectOf([1], "data", '{"a": 1}')).toThrow('data must be a JSON object, e.g. {"a": 1}');
  expect(() => jsonObjectOf("3", "data", '{"a": 1}')).toThrow('data must be a JSON object, e.g. {"a": 1}');
});
