/**
 * An Activepieces flow export or template file as a Weft definition and a report (docs/import.md). Weft's
 * tree is Activepieces' own shape (trigger → nextAction, ROUTER, LOOP_ON_ITEMS), so most of this is renaming:
 * step settings become config, `{{step_1['body']['x']}}` becomes `{{step_1.output.body.x}}`, a legacy BRANCH
 * becomes a ROUTER, and a piece becomes a built-in piece or the installed package of the same name.
 * A pure function: what is installed is asked through `installed`.
 */
import type { ActionNodeT, ConditionT, TriggerNodeT } from "../../../schema/workflow";
import { actionIdFor, pieceIdFor } from "../../../pieces-runtime/activepieces";
import { emptyFlow, type ImportReport, type ImportReportEntry, type ImportResult, placeholderStep, StepNames } from "./report";

export interface InstalledPieces {
  /** The action ids of the served piece `pieceId`, or undefined when it is not served. */
  actions(pieceId: string): string[] | undefined;
}

interface ApStep {
  name: string;
  displayName?: string;
  type: string;
  skip?: boolean;
  settings?: Record<string, any>;
  nextAction?: ApStep | null;
  firstLoopAction?: ApStep | null;
  onSuccessAction?: ApStep | null;
  onFailureAction?: ApStep | null;
  children?: Array<ApStep | null>;
}

/** Activepieces pieces Weft has built-ins for: package → piece, action renames and a config mapping. */
const BUILTIN: Record<
  string,
  { pieceId: string; actions: Record<string, { actionId: string; config: (input: Record<string, any>) => Record<string, unknown> }> }
> = {
  "@activepieces/piece-http": {
    pieceId: "http",
    actions: {
      send_request: {
        actionId: "send_request",
        config: (i) => {
          const c: Record<string, unknown> = { method: i.method ?? "GET", url: i.url, body_type: "none", auth_type: "none" };
          if (i.headers && Object.keys(i.headers).length) c.headers = i.headers;
          if (i.queryParams && Object.keys(i.queryParams).length) c.query = i.queryParams;
          const body = i.body?.data ?? i.body;
          if (i.body_type === "json" || (i.body_type === undefined && body !== undefined && typeof body === "object" && Object.keys(body).length)) {
            c.body_type = "json";
            c.body_json = body;
          } else if (i.body_type === "form_data") {
            c.body_type = "form";
            c.body_form = body;
          } else if (i.body_type === "raw") {
            c.body_type = "raw";
            c.body_raw = body;
          }
          return c;
        },
      },
    },
  },
  "@activepieces/piece-webhook": {
    pieceId: "webhook",
    actions: {
      return_response: {
        actionId: "respond",
        config: (i) => {
          const r = i.fields ?? i.response ?? i;
          const c: Record<string, unknown> = { status: r.status ?? 200 };
          if (r.headers && Object.keys(r.headers).length) c.headers = r.headers;
          if (r.body !== undefined) c.body = r.body?.data ?? r.body;
          return c;
        },
      },
    },
  },
  "@activepieces/piece-delay": {
    pieceId: "delay",
    actions: {
      delayFor: {
        actionId: "delay_for",
        config: (i) => {
          const unit = { SECONDS: 1, MINUTES: 60, HOURS: 3600, DAYS: 86_400 }[String(i.unit ?? "SECONDS").toUpperCase()] ?? 1;
          return { seconds: Number(i.delayFor ?? 0) * unit };
        },
      },
      delayUntil: { actionId: "delay_until", config: (i) => ({ until: i.delayUntilTimestamp }) },
    },
  },
};

const OPERATORS: Record<string, string> = {
  TEXT_CONTAINS: "text_contains",
  TEXT_DOES_NOT_CONTAIN: "text_not_contains",
  TEXT_EXACTLY_MATCHES: "text_eq",
  TEXT_DOES_NOT_EXACTLY_MATCH: "text_neq",
  TEXT_STARTS_WITH: "text_starts_with",
  TEXT_ENDS_WITH: "text_ends_with",
  TEXT_MATCHES_REGEX: "text_regex",
  NUMBER_IS_GREATER_THAN: "number_gt",
  NUMBER_IS_LESS_THAN: "number_lt",
  NUMBER_IS_EQUAL_TO: "number_eq",
  BOOLEAN_IS_TRUE: "boolean_true",
  BOOLEAN_IS_FALSE: "boolean_false",
  EXISTS: "exists",
  DOES_NOT_EXIST: "not_exists",
  LIST_CONTAINS: "list_contains",
  LIST_IS_EMPTY: "list_empty",
  LIST_IS_NOT_EMPTY: "list_not_empty",
  DATE_IS_BEFORE: "date_before",
  DATE_IS_AFTER: "date_after",
};
const UNARY = new Set(["boolean_true", "boolean_false", "exists", "not_exists", "list_empty", "list_not_empty"]);

export function importActivepieces(source: any, installed: InstalledPieces): ImportResult {
  return new ApImport(installed).run(source);
}

class ApImport {
  private readonly names = new StepNames();
  private readonly entries: ImportReportEntry[] = [];
  private readonly missing = new Map<string, ImportReport["missingPieces"][number]>();
  /** Activepieces step name → Weft step name, and which are loops (their item and index are read without `.output`). */
  private readonly renamed = new Map<string, string>();
  private readonly loops = new Set<string>();
  private placeholders = 0;

  constructor(private readonly installed: InstalledPieces) {}

  run(source: any): ImportResult {
    // A template file and a flow export hold the flow under template; a flow version is the flow itself.
    const flow = source?.template ?? source?.version ?? source;
    const apTrigger: ApStep | undefined = flow?.trigger;
    this.renamed.set("trigger", "trigger");
    this.collectNames(apTrigger?.nextAction);
    const trigger = this.trigger(apTrigger);
    const next = this.chain(apTrigger?.nextAction);
    if (next) trigger.nextAction = next;
    // The report lists the steps in the flow's order (a router before its branches).
    const order = new Map([...this.renamed.keys()].map((name, i) => [name, i]));
    this.entries.sort((a, b) => (order.get(a.node) ?? 0) - (order.get(b.node) ?? 0));
    return {
      name: String(source?.name ?? flow?.displayName ?? "Imported from Activepieces").slice(0, 200),
      definition: emptyFlow(trigger),
      report: { format: "activepieces", entries: this.entries, missingPieces: [...this.missing.values()], hasPlaceholders: this.placeholders > 0 },
    };
  }

  /** Names first, so an expression may read a step whatever its place. */
  private collectNames(step: ApStep | null | undefined): void {
    for (let s = step; s; s = s.nextAction) {
      this.renamed.set(s.name, this.names.of(s.name));
      if (s.type === "LOOP_ON_ITEMS") this.loops.add(s.name);
      for (const child of [s.firstLoopAction, s.onSuccessAction, s.onFailureAction, ...(s.children ?? [])]) this.collectNames(child);
    }
  }

  private trigger(t: ApStep | undefined): TriggerNodeT {
    const base = { name: "trigger", displayName: String(t?.displayName ?? "Trigger").slice(0, 200) };
    const s = t?.settings ?? {};
    const entry = (outcome: ImportReportEntry["outcome"], note?: string) =>
      this.entries.push({
        node: t?.name ?? "trigger",
        type: `${t?.type ?? "EMPTY"}${s.pieceName ? ` ${s.pieceName}.${s.triggerName}` : ""}`,
        outcome,
        step: "trigger",
        ...(note ? { note } : {}),
      });
    if (!t || t.type === "EMPTY") {
      entry("mapped");
      return { ...base, type: "manual", config: {} };
    }
    const input = this.tx(s.input ?? {});
    if (s.pieceName === "@activepieces/piece-webhook") {
      entry("mapped");
      return { ...base, type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: {} };
    }
    if (s.pieceName === "@activepieces/piece-schedule") {
      const cron =
        s.triggerName === "cron_expression"
          ? input.cronExpression
          : s.triggerName === "every_x_minutes"
            ? `*/${input.minutes ?? 5} * * * *`
            : s.triggerName === "every_hour"
              ? "0 * * * *"
              : s.triggerName === "every_day"
                ? `0 ${input.hour_of_the_day ?? 0} * * *`
                : undefined;
      if (cron) {
        entry("mapped");
        return { ...base, type: "cron", pieceId: "schedule", actionId: "cron", config: { expression: cron, timezone: input.timezone ?? "UTC" } };
      }
    }
    const pieceId = pieceIdFor(String(s.pieceName ?? ""));
    if (!this.installed.actions(pieceId)) this.need(s.pieceName, s.pieceVersion);
    this.placeholders++;
    entry("not_mapped", `trigger ${s.pieceName}.${s.triggerName} is not carried: a manual trigger stands in; replace it`);
    return { ...base, type: "manual", config: {}, valid: false };
  }

  private chain(step: ApStep | null | undefined): ActionNodeT | undefined {
    if (!step) return undefined;
    const node = this.step(step);
    const next = this.chain(step.nextAction);
    if (next) node.nextAction = next;
    return node;
  }

  private step(s: ApStep): ActionNodeT {
    const name = this.renamed.get(s.name) ?? this.names.of(s.name);
    const base = { name, displayName: String(s.displayName ?? s.name).slice(0, 200), ...(s.skip ? { skip: true } : {}) };
    const settings = s.settings ?? {};
    const entry = (outcome: ImportReportEntry["outcome"], type: string, note?: string) =>
      this.entries.push({ node: s.name, type, outcome, step: name, ...(note ? { note } : {}) });
    switch (s.type) {
      case "CODE": {
        const notes =
          settings.sourceCode?.packageJson &&
          settings.sourceCode.packageJson.trim() !== "{}" &&
          /"dependencies"\s*:\s*\{\s*"/.test(settings.sourceCode.packageJson)
            ? ["npm dependencies of the code are not installed: the sandbox has none"]
            : [];
        entry(notes.length ? "approximated" : "mapped", "CODE", notes[0]);
        return {
          ...base,
          type: "PIECE",
          pieceId: "code",
          actionId: "run_code",
          config: { input: this.tx(settings.input ?? {}), code: settings.sourceCode?.code ?? "" },
        };
      }
      case "LOOP_ON_ITEMS": {
        entry("mapped", "LOOP_ON_ITEMS");
        const body = this.chain(s.firstLoopAction);
        return { ...base, type: "LOOP_ON_ITEMS", config: { items: this.tx(settings.items ?? "") }, ...(body ? { firstLoopAction: body } : {}) };
      }
      case "ROUTER": {
        const notes: string[] = [];
        if (settings.executionType === "EXECUTE_ALL_MATCH") notes.push("execute all matching branches: Weft runs the first that matches");
        const branches = ((settings.branches ?? []) as any[]).map((b, i) => {
          const first = this.chain(s.children?.[i]);
          const conditions = b.branchType === "FALLBACK" ? [] : this.conditions(b.conditions ?? [], notes);
          return { name: String(b.branchName ?? `Branch ${i + 1}`).slice(0, 100), conditions, ...(first ? { firstAction: first } : {}) };
        });
        entry(notes.length ? "approximated" : "mapped", "ROUTER", notes.join("; ") || undefined);
        return { ...base, type: "ROUTER", config: {}, branches };
      }
      case "BRANCH": {
        const notes: string[] = [];
        const success = this.chain(s.onSuccessAction);
        const failure = this.chain(s.onFailureAction);
        const conditions = this.conditions(settings.conditions ?? [], notes);
        entry(notes.length ? "approximated" : "mapped", "BRANCH", ["a legacy BRANCH becomes a ROUTER with branches true and otherwise", ...notes].join("; "));
        return {
          ...base,
          type: "ROUTER",
          config: {},
          branches: [
            { name: "true", conditions, ...(success ? { firstAction: success } : {}) },
            { name: "otherwise", conditions: [], ...(failure ? { firstAction: failure } : {}) },
          ],
        };
      }
      case "PIECE":
        return this.piece(s, base, settings, entry);
      default:
        this.placeholders++;
        entry("not_mapped", s.type, `step type ${s.type} has no Weft counterpart: a placeholder stands in`);
        return placeholderStep(name, s.type, `Activepieces step type ${s.type}`, settings);
    }
  }

  private piece(
    s: ApStep,
    base: { name: string; displayName: string },
    settings: Record<string, any>,
    entry: (o: ImportReportEntry["outcome"], type: string, note?: string) => void,
  ): ActionNodeT {
    const pkg = String(settings.pieceName ?? "");
    const actionName = String(settings.actionName ?? "");
    const type = `PIECE ${pkg}.${actionName}`;
    const input = this.tx(settings.input ?? {});
    const builtin = BUILTIN[pkg]?.actions[actionName];
    if (builtin) {
      entry("mapped", type, `built-in ${BUILTIN[pkg]!.pieceId}.${builtin.actionId}`);
      return { ...base, type: "PIECE", pieceId: BUILTIN[pkg]!.pieceId, actionId: builtin.actionId, config: builtin.config(input) };
    }
    const pieceId = pieceIdFor(pkg);
    const actionId = actionIdFor(actionName);
    const served = this.installed.actions(pieceId);
    const notes: string[] = [];
    if (input.auth !== undefined) {
      delete input.auth;
      notes.push("choose a connection: Activepieces connections are not carried");
    }
    if (!served) {
      this.need(pkg, settings.pieceVersion);
      notes.push(`the package ${pkg} is not installed: weft pieces add ${pkg}`);
    } else if (!served.includes(actionId)) notes.push(`the installed ${pkg} has no action ${actionName}`);
    entry(notes.length ? "approximated" : "mapped", type, notes.join("; ") || undefined);
    return { ...base, type: "PIECE", pieceId, actionId, config: input };
  }

  private need(pkg: string | undefined, version: string | undefined): void {
    if (!pkg || this.missing.has(pkg)) return;
    const exact = version?.replace(/^[~^]/, "");
    this.missing.set(pkg, { package: pkg, ...(exact ? { version: exact } : {}), command: `weft pieces add ${pkg}${exact ? `@${exact}` : ""}` });
  }

  private conditions(groups: any[][], notes: string[]): ConditionT[][] {
    return groups.map((group) =>
      group.flatMap((c) => {
        const operator = OPERATORS[c.operator];
        if (!operator) {
          notes.push(`operator ${c.operator} has no Weft counterpart; the condition is left out`);
          return [];
        }
        if (c.caseSensitive === false && operator.startsWith("text_")) notes.push("a case-insensitive text condition compares exactly in Weft");
        return [UNARY.has(operator) ? { field: this.tx(c.firstValue), operator } : { field: this.tx(c.firstValue), operator, value: this.tx(c.secondValue) }];
      }),
    );
  }

  /** `{{ }}` paths of Activepieces as Weft's: a step's output is under `.output`; `['x']` is `.x`. */
  private tx(value: any): any {
    if (Array.isArray(value)) return value.map((v) => this.tx(v));
    if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.tx(v)]));
    if (typeof value !== "string") return value;
    return value.replace(/\{\{([\s\S]*?)\}\}/g, (_, inner: string) => `{{${this.expression(inner)}}}`);
  }

  private expression(inner: string): string {
    const bracketsToDots = (path: string) =>
      path.replace(/\[\s*(['"])(.*?)\1\s*\]/g, (_, _q, key: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `.\`${key}\``));
    return inner.replace(
      /\b([A-Za-z_][A-Za-z0-9_]*)((?:\s*\[\s*(?:'[^']*'|"[^"]*"|\d+)\s*\]|\.[A-Za-z_][A-Za-z0-9_]*)*)/g,
      (whole, root: string, rest: string) => {
        const weft = this.renamed.get(root);
        if (!weft) return whole;
        const path = bracketsToDots(rest);
        if (root === "trigger") return `trigger${path}`;
        if (this.loops.has(root) && /^\.(item|index)\b/.test(path)) return `${weft}${path}`;
        return `${weft}.output${path}`;
      },
    );
  }
}
