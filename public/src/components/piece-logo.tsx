/**
 * A piece's logo: an image from its URL (Activepieces' CDN, allowed by the UI's CSP: docs/activepieces.md),
 * or, when there is none or it does not load, the first letters of its name on a tinted square.
 */
import { useSignal } from "@preact/signals";
import { setTo } from "../bind";

export function initials(name: string): string {
  const words = name
    .replace(/[^A-Za-z0-9 ]+/g, " ")
    .split(/\s+/)
    .filter(Boolean);
  return ((words[0]?.[0] ?? "?") + (words[1]?.[0] ?? "")).toUpperCase();
}

export function PieceLogo({ src, name, size = 40 }: { src: string | null | undefined; name: string; size?: number }) {
  const failed = useSignal(false);
  if (src && !failed.value) {
    return <img class="piece-logo" src={src} alt="" width={size} height={size} loading="lazy" referrerpolicy="no-referrer" onError={setTo(failed, true)} />;
  }
  return (
    <span
      class="piece-logo piece-logo-letters"
      aria-hidden="true"
      style={{ width: `${size}px`, height: `${size}px`, fontSize: `${Math.round(size * 0.4)}px`, color: "#3d4b5c" }}
    >
      {initials(name)}
    </span>
  );
}
