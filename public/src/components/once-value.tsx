/**
 * A value the server shows once (a new API token, an invitation link): read-only, monospace, and selected
 * whole when it gets focus, so it can be copied. Copy buttons find it by its class, "token-value".
 */
export function OnceValue({ label, value }: { label: string; value: string }) {
  return <input class="token-value mono" readOnly aria-label={label} value={value} onFocus={(e) => (e.target as HTMLInputElement).select()} />;
}
