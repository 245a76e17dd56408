/**
 * The <option>s of a select, from a list: a choice is a value shown as itself, or [value, label].
 *
 * @example
 * <select {...bindSelect(role)}>
 *   <Options choices={[["", "any"], ...ROLES]} />
 * </select>
 */
export type Choice = string | readonly [value: string, label: string];

export function Options({ choices }: { choices: readonly Choice[] }) {
  return (
    <>
      {choices.map((choice) => {
        const [value, label] = typeof choice === "string" ? [choice, choice] : choice;
        return (
          <option key={value} value={value}>
            {label}
          </option>
        );
      })}
    </>
  );
}
