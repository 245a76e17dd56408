/**
 * Issue 21's scenario, shared by its test (test/security/sandbox-fairness.test.ts) and its bench
 * (bench/sandbox.ts): webhook → set_fields → a code step that busy-waits 1.5 s → a 3 s delay → set_fields.
 */
export const BUSY_CODE = "const t = Date.now(); while (Date.now() - t < 1500) {} return { busy: true };";

export const BURST_DEFINITION = {
  schemaVersion: 2,
  trigger: {
    name: "trigger",
    type: "webhook",
    pieceId: "webhook",
    actionId: "catch_webhook",
    config: {},
    nextAction: {
      name: "first",
      type: "PIECE",
      pieceId: "data",
      actionId: "set_fields",
      config: { fields: { n: "{{trigger.body.n}}" } },
      nextAction: {
        name: "busy",
        type: "PIECE",
        pieceId: "code",
        actionId: "run_code",
        config: { code: BUSY_CODE, input: {} },
        nextAction: {
          name: "pause",
          type: "PIECE",
          pieceId: "delay",
          actionId: "delay_for",
          config: { seconds: 3 },
          nextAction: { name: "last", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { done: true } } },
        },
      },
    },
  },
};
