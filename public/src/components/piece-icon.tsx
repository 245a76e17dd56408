/**
 * Every piece's icon, so a workflow reads at a glance: each built-in piece of pieces/index.ts (and the flow
 * steps Router, Loop and the manual trigger) has a small line drawing of its own on a tinted tile; other
 * pieces show their logo (an https image: Activepieces' CDN, or a data: image) or their emoji, else
 * their initials. `usePieceIcons()` gives the icon each served piece declares, for the step cards.
 */
import { useSignal } from "@preact/signals";
import type { JSX } from "preact";
import { useEffect } from "preact/hooks";
import { listPieces } from "../catalog";
import { PieceLogo } from "./piece-logo";

interface Drawing {
  /** The tile's hue (the stroke is drawn darker, the tile lighter, of it). */
  hue: number;
  shape: JSX.Element;
}

const BUILTIN: Record<string, Drawing> = {
  approval: {
    hue: 145,
    shape: (
      <>
        <circle cx="12" cy="12" r="8.5" />
        <path d="M8 12.5l2.8 2.8L16.5 9" />
      </>
    ),
  },
  code: { hue: 260, shape: <path d="M9 7l-5 5 5 5M15 7l5 5-5 5" /> },
  data: {
    hue: 200,
    shape: (
      <>
        <rect x="4" y="5" width="16" height="14" rx="2" />
        <path d="M4 10h16M10 10v9" />
      </>
    ),
  },
  delay: { hue: 35, shape: <path d="M7 4h10M7 20h10M8 4v2.5l4 5.5 4-5.5V4M8 20v-2.5l4-5.5 4 5.5V20" /> },
  email: {
    hue: 210,
    shape: (
      <>
        <rect x="3.5" y="6" width="17" height="12" rx="2" />
        <path d="M4 7.5l8 6 8-6" />
      </>
    ),
  },
  feed: {
    hue: 25,
    shape: (
      <>
        <circle cx="6.5" cy="17.5" r="1.5" />
        <path d="M5 11a8 8 0 0 1 8 8M5 5a14 14 0 0 1 14 14" />
      </>
    ),
  },
  form: {
    hue: 170,
    shape: (
      <>
        <rect x="5" y="3.5" width="14" height="17" rx="2" />
        <path d="M8.5 8.5h7M8.5 12.5h7M8.5 16.5h4" />
      </>
    ),
  },
  github: {
    hue: 230,
    shape: (
      <>
        <circle cx="7" cy="6" r="2" />
        <circle cx="7" cy="18" r="2" />
        <circle cx="17" cy="8" r="2" />
        <path d="M7 8v8M17 10c0 4-10 2.5-10 6" />
      </>
    ),
  },
  http: {
    hue: 190,
    shape: (
      <>
        <circle cx="12" cy="12" r="8.5" />
        <path d="M3.5 12h17M12 3.5c3.2 3 3.2 14 0 17M12 3.5c-3.2 3-3.2 14 0 17" />
      </>
    ),
  },
  influxdb: {
    hue: 175,
    shape: (
      <>
        <path d="M4 4v16h16" />
        <path d="M7 15l3.5-4.5 3 2.5L19 7" />
      </>
    ),
  },
  llm: { hue: 285, shape: <path d="M12 3.5l2 6 6 2-6 2-2 6-2-6-6-2 6-2z" /> },
  mqtt: {
    hue: 315,
    shape: (
      <>
        <circle cx="12" cy="12" r="2" />
        <path d="M8.5 8.5a5 5 0 0 0 0 7M15.5 8.5a5 5 0 0 1 0 7M5.5 5.5a9.2 9.2 0 0 0 0 13M18.5 5.5a9.2 9.2 0 0 1 0 13" />
      </>
    ),
  },
  notify: { hue: 45, shape: <path d="M6.5 16v-5a5.5 5.5 0 0 1 11 0v5l1.8 2H4.7zM10 20.5h4" /> },
  oauth2: {
    hue: 55,
    shape: (
      <>
        <circle cx="8" cy="12" r="4" />
        <path d="M12 12h8.5M17.5 12v3M20.5 12v2.5" />
      </>
    ),
  },
  runs: { hue: 125, shape: <path d="M19.5 10.5A7.8 7.8 0 0 0 6 7L4.5 8.5M4.5 4.5v4h4M4.5 13.5A7.8 7.8 0 0 0 18 17l1.5-1.5M19.5 19.5v-4h-4" /> },
  schedule: {
    hue: 15,
    shape: (
      <>
        <circle cx="12" cy="12" r="8.5" />
        <path d="M12 7v5l3.2 2" />
      </>
    ),
  },
  sql: {
    hue: 220,
    shape: (
      <>
        <ellipse cx="12" cy="6" rx="7" ry="2.8" />
        <path d="M5 6v12c0 1.6 3.1 2.8 7 2.8s7-1.2 7-2.8V6M5 12c0 1.6 3.1 2.8 7 2.8s7-1.2 7-2.8" />
      </>
    ),
  },
  store: { hue: 30, shape: <path d="M3.5 7.5L12 4l8.5 3.5L12 11zM3.5 7.5v9L12 20l8.5-3.5v-9M12 11v9" /> },
  subflows: {
    hue: 250,
    shape: (
      <>
        <rect x="3.5" y="3.5" width="7.5" height="7.5" rx="1.5" />
        <rect x="13" y="13" width="7.5" height="7.5" rx="1.5" />
        <path d="M7.2 11v5.5H13" />
      </>
    ),
  },
  tags: {
    hue: 340,
    shape: (
      <>
        <path d="M3.5 12V3.5H12l8.5 8.5-8.5 8.5z" />
        <circle cx="8" cy="8" r="1.4" />
      </>
    ),
  },
  text: { hue: 0, shape: <path d="M5 6.5V4h14v2.5M12 4v16M9 20h6" /> },
  webhook: {
    hue: 275,
    shape: <path d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1" />,
  },
  // The flow steps, which are no piece: drawn the same way.
  router: { hue: 200, shape: <path d="M3.5 12H10l4-6h6.5M10 12l4 6h6.5M17.5 3.5L20.5 6l-3 2.5M17.5 15.5l3 2.5-3 2.5" /> },
  loop: { hue: 160, shape: <path d="M17 2.5l3 3-3 3M20 5.5H8.5a4.5 4.5 0 0 0-4.5 4.5v.5M7 21.5l-3-3 3-3M4 18.5h11.5a4.5 4.5 0 0 0 4.5-4.5v-.5" /> },
  manual: { hue: 145, shape: <path d="M8.5 5.5v13l10-6.5z" /> },
};

/** The ids that have a drawing of their own: the built-in pieces and the flow steps. */
export const DRAWN_IDS = Object.keys(BUILTIN);

export function PieceIcon({ pieceId, icon, name, size = 20 }: { pieceId: string; icon?: string | null; name: string; size?: number }) {
  const drawing = BUILTIN[pieceId];
  if (drawing) {
    return (
      <span
        class="piece-icon piece-icon-drawn"
        aria-hidden="true"
        data-icon={pieceId}
        style={{ width: `${size}px`, height: `${size}px`, background: `hsl(${drawing.hue} 70% 94%)`, color: `hsl(${drawing.hue} 55% 34%)` }}
      >
        <svg
          aria-hidden="true"
          viewBox="0 0 24 24"
          width={Math.round(size * 0.78)}
          height={Math.round(size * 0.78)}
          fill="none"
          stroke="currentColor"
          stroke-width="1.9"
          stroke-linecap="round"
          stroke-linejoin="round"
        >
          {drawing.shape}
        </svg>
      </span>
    );
  }
  if (icon && (icon.startsWith("https://") || icon.startsWith("data:image/"))) return <PieceLogo src={icon} name={name} size={size} />;
  if (icon) {
    return (
      <span class="piece-icon piece-icon-emoji" aria-hidden="true" style={{ width: `${size}px`, height: `${size}px`, fontSize: `${Math.round(size * 0.8)}px` }}>
        {icon}
      </span>
    );
  }
  return <PieceLogo src={null} name={name} size={size} />;
}

/** pieceId → { icon, name } of every piece this server serves (read once, with the cached piece list). */
export function usePieceIcons(): Map<string, { icon: string | null; name: string }> {
  const icons = useSignal(new Map<string, { icon: string | null; name: string }>());
  useEffect(() => {
    listPieces()
      .then((pieces) => {
        icons.value = new Map(pieces.map((p) => [p.id, { icon: (p as { icon?: string | null }).icon ?? null, name: p.name }]));
      })
      .catch(() => undefined);
  }, []);
  return icons.value;
}
