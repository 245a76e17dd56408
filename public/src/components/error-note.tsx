/**
 * An API or client error shown with the server's own message (role=alert so it is announced), and its
 * counterpart <StatusNote>: what the last action did, as a note announced politely (role=status).
 */
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

/** What the last action did ("Saved.", "Removed 10.0.0.0/8: …"); nothing when there is no message. */
export function StatusNote({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p class="note" role="status">
      {message}
    </p>
  );
}
