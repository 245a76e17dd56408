/**
 * Every piece's icon, so a workflow reads at a glance: each built-in piece of pieces/index.ts (and the flow
 * steps Router, Loop and the manual trigger) has a small line drawing of its own on a tinted tile; other
 * pieces show their logo (an https image: Activepieces' CDN, or a data: image) or their emoji, else
 * their initials. `usePieceIcons()` gives the icon each served piece declares, for the step cards.
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { listPieces } from "../catalog";
import { PieceLogo } from "./piece-logo";

/** One line of a drawing: a path (its `d`), or a circle, rectangle or ellipse by its numbers. */
type Stroke =
  | string
  | { circle: [cx: number, cy: number, r: number] }
  | { rect: [x: number, y: number, width: number, height: number, rx: number] }
  | { ellipse: [cx: number, cy: number, rx: number, ry: number] };

interface Drawing {
  /** The tile's hue (the stroke is drawn darker, the tile lighter, of it). */
  hue: number;
  /** Drawn in a 24×24 box, in this order. */
  strokes: Stroke[];
}

const BUILTIN: Record<string, Drawing> = {
  approval: { hue: 145, strokes: [{ circle: [12, 12, 8.5] }, "M8 12.5l2.8 2.8L16.5 9"] },
  code: { hue: 260, strokes: ["M9 7l-5 5 5 5M15 7l5 5-5 5"] },
  data: { hue: 200, strokes: [{ rect: [4, 5, 16, 14, 2] }, "M4 10h16M10 10v9"] },
  delay: { hue: 35, strokes: ["M7 4h10M7 20h10M8 4v2.5l4 5.5 4-5.5V4M8 20v-2.5l4-5.5 4 5.5V20"] },
  email: { hue: 210, strokes: [{ rect: [3.5, 6, 17, 12, 2] }, "M4 7.5l8 6 8-6"] },
  feed: { hue: 25, strokes: [{ circle: [6.5, 17.5, 1.5] }, "M5 11a8 8 0 0 1 8 8M5 5a14 14 0 0 1 14 14"] },
  form: { hue: 170, strokes: [{ rect: [5, 3.5, 14, 17, 2] }, "M8.5 8.5h7M8.5 12.5h7M8.5 16.5h4"] },
  github: { hue: 230, strokes: [{ circle: [7, 6, 2] }, { circle: [7, 18, 2] }, { circle: [17, 8, 2] }, "M7 8v8M17 10c0 4-10 2.5-10 6"] },
  http: { hue: 190, strokes: [{ circle: [12, 12, 8.5] }, "M3.5 12h17M12 3.5c3.2 3 3.2 14 0 17M12 3.5c-3.2 3-3.2 14 0 17"] },
  influxdb: { hue: 175, strokes: ["M4 4v16h16", "M7 15l3.5-4.5 3 2.5L19 7"] },
  llm: { hue: 285, strokes: ["M12 3.5l2 6 6 2-6 2-2 6-2-6-6-2 6-2z"] },
  mqtt: {
    hue: 315,
    strokes: [{ circle: [12, 12, 2] }, "M8.5 8.5a5 5 0 0 0 0 7M15.5 8.5a5 5 0 0 1 0 7M5.5 5.5a9.2 9.2 0 0 0 0 13M18.5 5.5a9.2 9.2 0 0 1 0 13"],
  },
  notify: { hue: 45, strokes: ["M6.5 16v-5a5.5 5.5 0 0 1 11 0v5l1.8 2H4.7zM10 20.5h4"] },
  oauth2: { hue: 55, strokes: [{ circle: [8, 12, 4] }, "M12 12h8.5M17.5 12v3M20.5 12v2.5"] },
  runs: { hue: 125, strokes: ["M19.5 10.5A7.8 7.8 0 0 0 6 7L4.5 8.5M4.5 4.5v4h4M4.5 13.5A7.8 7.8 0 0 0 18 17l1.5-1.5M19.5 19.5v-4h-4"] },
  schedule: { hue: 15, strokes: [{ circle: [12, 12, 8.5] }, "M12 7v5l3.2 2"] },
  sql: { hue: 220, strokes: [{ ellipse: [12, 6, 7, 2.8] }, "M5 6v12c0 1.6 3.1 2.8 7 2.8s7-1.2 7-2.8V6M5 12c0 1.6 3.1 2.8 7 2.8s7-1.2 7-2.8"] },
  store: { hue: 30, strokes: ["M3.5 7.5L12 4l8.5 3.5L12 11zM3.5 7.5v9L12 20l8.5-3.5v-9M12 11v9"] },
  subflows: { hue: 250, strokes: [{ rect: [3.5, 3.5, 7.5, 7.5, 1.5] }, { rect: [13, 13, 7.5, 7.5, 1.5] }, "M7.2 11v5.5H13"] },
  tags: { hue: 340, strokes: ["M3.5 12V3.5H12l8.5 8.5-8.5 8.5z", { circle: [8, 8, 1.4] }] },
  text: { hue: 0, strokes: ["M5 6.5V4h14v2.5M12 4v16M9 20h6"] },
  webhook: { hue: 275, strokes: ["M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1"] },
  // The flow steps, which are no piece: drawn the same way.
  router: { hue: 200, strokes: ["M3.5 12H10l4-6h6.5M10 12l4 6h6.5M17.5 3.5L20.5 6l-3 2.5M17.5 15.5l3 2.5-3 2.5"] },
  loop: { hue: 160, strokes: ["M17 2.5l3 3-3 3M20 5.5H8.5a4.5 4.5 0 0 0-4.5 4.5v.5M7 21.5l-3-3 3-3M4 18.5h11.5a4.5 4.5 0 0 0 4.5-4.5v-.5"] },
  manual: { hue: 145, strokes: ["M8.5 5.5v13l10-6.5z"] },
};

/** The SVG element of one stroke. */
function StrokeShape({ stroke }: { stroke: Stroke }) {
  if (typeof stroke === "string") return <path d={stroke} />;
  if ("circle" in stroke) {
    const [cx, cy, r] = stroke.circle;
    return <circle cx={cx} cy={cy} r={r} />;
  }
  if ("rect" in stroke) {
    const [x, y, width, height, rx] = stroke.rect;
    return <rect x={x} y={y} width={width} height={height} rx={rx} />;
  }
  const [cx, cy, rx, ry] = stroke.ellipse;
  return <ellipse cx={cx} cy={cy} rx={rx} ry={ry} />;
}

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
          {drawing.strokes.map((stroke, i) => (
            <StrokeShape key={i} stroke={stroke} />
          ))}
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
