/**
 * The piece host's own entry when Weft runs from source: it loads only the host (./host.ts) and what it
 * imports, not the server, so a piece's first use starts quickly. The compiled binary runs
 * `weft __piece-host` instead (src/main.ts), its sources being one bundle.
 */
import { runPieceHost } from "./host";

await runPieceHost();
