/** An API or client error shown with the server's own message (role=alert so it is announced). */
import { describeError } from "../api";

export function ErrorNote({ error, onDismiss }: { error: unknown; onDismiss?: () => void }) {
  if (!error) return null;
  return (
    <div class="note note-error" role="alert">
      <span>{describeError(error)}</span>
      {onDismiss && (
        <button type="button" class="link" onClick={onDismiss} aria-label="Dismiss message">
          ×
        </button>
      )}
    </div>
  );
}
