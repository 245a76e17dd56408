/**
 * A text input that commits on change (blur, Enter, Tab) and keeps what the user typed until then: a
 * re-render meanwhile (a validation answer, a live update) does not put the stored value back under the
 * cursor, as a plain `value=` input would in Preact. Outside an edit it shows the current value.
 */
import { useSignal } from "@preact/signals";
import { setTo } from "../bind";

interface Props {
  id?: string;
  "aria-describedby"?: string;
  value: string;
  onCommit: (text: string) => void;
}

export function CommitInput({ value, onCommit, ...rest }: Props) {
  // null when not editing: the field then follows `value`.
  const typed = useSignal<string | null>(null);
  return (
    <input
      {...rest}
      value={typed.value ?? value}
      onFocus={setTo(typed, value)}
      onInput={(e) => {
        typed.value = (e.target as HTMLInputElement).value;
      }}
      onChange={(e) => onCommit((e.target as HTMLInputElement).value)}
      onBlur={setTo(typed, null)}
    />
  );
}
