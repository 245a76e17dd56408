/**
 * A list shown as a table (class "table"): one head cell per column, then the rows given as children. `actions`
 * names a last column for each row's buttons, said to screen readers only. `label` is the table's aria-label.
 *
 * @example
 * <Table label="Allowed ranges" columns={["Range", "Since"]} actions="Actions">
 *   {ranges.map((r) => <tr key={r.id}>…</tr>)}
 * </Table>
 */
import type { ComponentChildren } from "preact";

export function Table({
  columns,
  actions,
  label,
  class: extra,
  children,
}: {
  columns: string[];
  actions?: string;
  label?: string;
  class?: string;
  children?: ComponentChildren;
}) {
  return (
    <table class={extra ? `table ${extra}` : "table"} aria-label={label}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col" key={column}>
              {column}
            </th>
          ))}
          {actions && (
            <th scope="col">
              <span class="sr-only">{actions}</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
