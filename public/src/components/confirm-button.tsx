/**
 * A row's dangerous action (Delete, Revoke, Remove): a small danger button that runs `onConfirm` only after the
 * browser's confirm() says yes to `question`. `label` names it for screen readers ("Delete Nightly sync").
 *
 * @example
 * <ConfirmButton label={`Delete ${c.name}`} question={`Delete ${c.name}?`} onConfirm={() => act(() => api.del(url))}>Delete</ConfirmButton>
 */
import type { ComponentChildren } from "preact";

export function ConfirmButton({
  question,
  onConfirm,
  label,
  disabled,
  title,
  children,
}: {
  question: string;
  onConfirm: () => unknown;
  label?: string;
  disabled?: boolean;
  title?: string;
  children: ComponentChildren;
}) {
  return (
    <button
      type="button"
      class="small danger"
      aria-label={label}
      disabled={disabled}
      title={title}
      onClick={() => {
        if (confirm(question)) void onConfirm();
      }}
    >
      {children}
    </button>
  );
}
