/** Read-only JSON, pretty-printed; long values scroll instead of stretching the page. */
export function JsonView({ value, label }: { value: unknown; label?: string }) {
  const text = value === undefined ? "—" : JSON.stringify(value, null, 2);
  return (
    <pre class="json" aria-label={label} tabIndex={0}>
      {text}
    </pre>
  );
}
