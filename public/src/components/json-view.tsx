/** Read-only JSON, pretty-printed; long values scroll instead of stretching the page. */
export function JsonView({ value, label }: { value: unknown; label?: string }) {
  const text = value === undefined ? "—" : JSON.stringify(value, null, 2);
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex lint/a11y/useAriaPropsSupportedByRole: a scrolling block must take keyboard focus to be scrolled without a mouse, and its label names it when focused
    <pre class="json" aria-label={label} tabIndex={0}>
      {text}
    </pre>
  );
}
