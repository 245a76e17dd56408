/** The workflow's tags as removable chips plus an input (Enter or comma adds); saved at once. */
import { useSignal } from "@preact/signals";
import { bindText } from "../../bind";

export function normalizeTags(current: string[], typed: string): string[] {
  const out = [...current];
  for (const raw of typed.split(",")) {
    const tag = raw.trim();
    if (tag && !out.some((t) => t.toLowerCase() === tag.toLowerCase())) out.push(tag.slice(0, 50));
  }
  return out;
}

export function TagsEditor({ tags, onChange, busy }: { tags: string[]; onChange(tags: string[]): void; busy?: boolean }) {
  const text = useSignal("");
  const add = () => {
    const next = normalizeTags(tags, text.value);
    text.value = "";
    if (next.length !== tags.length) onChange(next);
  };
  return (
    <div class="tags-editor" role="group" aria-label="Tags">
      {tags.map((tag) => (
        <span class="tag" key={tag}>
          {tag}
          <button type="button" class="link" aria-label={`Remove tag ${tag}`} disabled={busy} onClick={() => onChange(tags.filter((t) => t !== tag))}>
            ×
          </button>
        </span>
      ))}
      <input
        class="tag-input"
        aria-label="Add a tag"
        placeholder={tags.length ? "+ tag" : "+ add tag"}
        maxLength={50}
        {...bindText(text)}
        onKeyDown={(e) => {
          if (e.key === "Enter" || e.key === ",") {
            e.preventDefault();
            add();
          }
        }}
        onBlur={add}
      />
    </div>
  );
}
