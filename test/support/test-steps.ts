/**
 * A test-only piece whose steps run on the main thread (pure): `sleep` waits `config.ms`, `boom` fails.
 *   t.deps.pieces.register(testStepsPiece("mtest"));
 *   { type: "PIECE", pieceId: "mtest", actionId: "sleep", config: { ms: 400 } }
 */
import { action, definePiece } from "../../src/pieces-sdk";

export const testStepsPiece = (id: string) =>
  definePiece({
    id,
    name: "Test steps",
    version: "1.0.0",
    description: "steps for tests: one that waits, one that fails",
    triggers: [],
    actions: [
      action({
        id: "sleep",
        name: "Sleep",
        description: "waits config.ms",
        sideEffects: "pure",
        props: {},
        run: async (ctx) => {
          await Bun.sleep(Number(ctx.config.ms ?? 0));
          return { slept: true };
        },
      }),
      action({
        id: "boom",
        name: "Boom",
        description: "fails",
        sideEffects: "pure",
        props: {},
        run: () => {
          throw new Error("boom: upstream said no");
        },
      }),
    ],
  });
