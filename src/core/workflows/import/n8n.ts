/**
 * An n8n workflow (its JSON export: nodes with type and typeVersion, connections keyed by node name) as a
 * Weft definition and a report (docs/import.md). Written from n8n's public description of that format;
 * a pure function, nothing is stored here.
 *
 * n8n passes lists of items between nodes; a Weft step passes one value. The import follows one item:
 * `$json` becomes the previous step's output, and a node that fans out over items (a loop) iterates a list.
 */
import type { ActionNodeT, ConditionT, FlowVersionT, TriggerNodeT } from "../../../schema/workflow";
import { chain, emptyFlow, type ImportReportEntry, type ImportResult, placeholderStep, StepNames } from "./report";

export interface N8nNode {
  name: string;
  type: string;
  typeVersion?: number;
  parameters?: Record<string, any>;
  disabled?: boolean;
  credentials?: Record<string, unknown>;
}

export interface N8nWorkflow {
  name?: string;
  nodes: N8nNode[];
  connections?: Record<string, { main?: Array<Array<{ node: string; index?: number }> | null> }>;
}

const BASE = "n8n-nodes-base.";
const TRIGGERS = new Set([
  "webhook",
  "manualTrigger",
  "scheduleTrigger",
  "cron",
  "emailReadImap",
  "mqttTrigger",
  "rssFeedReadTrigger",
  "executeWorkflowTrigger",
]);

/** Where a node's output item is read in Weft: the expression `$json` becomes after it. */
type Ref = string;

interface Walk {
  /** The node whose input is being walked (for `$json`). */
  ref: Ref;
  /** A node that ends this path without being walked (a loop's own node, reached again by its body). */
  stopAt?: string;
  /** Inside a router's branches: Merge nodes reached, with the output each path brings (docs/import.md, "Merge"). */
  joins?: Map<string, Ref[]>;
}

export function importN8n(source: N8nWorkflow): ImportResult {
  return new N8nImport(source).run();
}

class N8nImport {
  private readonly names = new StepNames();
  private readonly entries: ImportReportEntry[] = [];
  private readonly refs = new Map<string, Ref>();
  private readonly nodes = new Map<string, N8nNode>();
  private readonly done = new Set<string>();
  private respondAtEnd = false;
  private returnAtEnd = false;
  private ends = 0;
  private placeholders = 0;
  /** Notes on the node being converted (an expression kept as written, ...). */
  private notes: string[] = [];

  constructor(private readonly source: N8nWorkflow) {
    for (const node of source.nodes ?? []) this.nodes.set(node.name, node);
  }

  run(): ImportResult {
    const incoming = new Set<string>();
    for (const outputs of Object.values(this.source.connections ?? {})) for (const list of outputs.main ?? []) for (const c of list ?? []) incoming.add(c.node);
    const roots = [...this.nodes.values()].filter((n) => !incoming.has(n.name) && !n.type.endsWith("stickyNote"));
    const triggerNode = roots.find((n) => TRIGGERS.has(short(n.type))) ?? roots[0];

    let trigger: TriggerNodeT;
    if (triggerNode) {
      trigger = this.trigger(triggerNode);
      this.done.add(triggerNode.name);
      trigger.nextAction = chain(this.follow(triggerNode.name, 0, { ref: this.refs.get(triggerNode.name) ?? "trigger" }));
    } else {
      trigger = { name: "trigger", displayName: "Manual trigger", type: "manual", config: {}, valid: true };
    }
    for (const node of this.nodes.values()) {
      if (this.done.has(node.name) || node.type.endsWith("stickyNote")) continue;
      const why = roots.includes(node)
        ? "a second trigger or start: a Weft workflow has one trigger; import it as a workflow of its own"
        : "not reachable from the trigger";
      this.entries.push({ node: node.name, type: node.type, outcome: "not_mapped", note: why });
    }
    // The report lists the nodes in the file's order, whatever order the tree was built in.
    const order = new Map([...this.nodes.keys()].map((name, i) => [name, i]));
    this.entries.sort((a, b) => (order.get(a.node) ?? 0) - (order.get(b.node) ?? 0));
    const definition: FlowVersionT = emptyFlow(trigger);
    return {
      name: this.source.name?.trim() || "Imported from n8n",
      definition,
      report: { format: "n8n", entries: this.entries, missingPieces: [], hasPlaceholders: this.placeholders > 0 },
    };
  }

  // ---- the trigger -------------------------------------------------------------------------------

  private trigger(node: N8nNode): TriggerNodeT {
    const p = node.parameters ?? {};
    const kind = short(node.type);
    const base = { name: "trigger", displayName: node.name.slice(0, 200) };
    const entry = (outcome: ImportReportEntry["outcome"], note?: string) =>
      this.entries.push({ node: node.name, type: node.type, outcome, step: "trigger", ...(note ? { note } : {}) });
    switch (kind) {
      case "webhook": {
        this.refs.set(node.name, "trigger");
        const mode = p.responseMode ?? "onReceived";
        const notes: string[] = [];
        if (p.path) notes.push(`the path "${p.path}" is not carried: Weft gives the workflow its own URL (/webhook/{token})`);
        if (mode === "lastNode") {
          this.respondAtEnd = true;
          notes.push("responseMode lastNode: a webhook.respond step with the last step's output ends each path");
        }
        entry(mode === "lastNode" ? "approximated" : "mapped", notes.join("; ") || undefined);
        return { ...base, type: "webhook", pieceId: "webhook", actionId: "catch_webhook", config: p.httpMethod ? { method: p.httpMethod } : {} };
      }
      case "manualTrigger":
        this.refs.set(node.name, "trigger.body");
        entry("mapped");
        return { ...base, type: "manual", config: {} };
      case "executeWorkflowTrigger":
        this.refs.set(node.name, "trigger.body");
        this.returnAtEnd = true;
        entry("approximated", "a callable trigger: the caller's payload is trigger.body; a subflows.return_response of the last output ends each path");
        return { ...base, type: "callable", pieceId: "subflows", actionId: "callable", config: {} };
      case "scheduleTrigger":
      case "cron": {
        this.refs.set(node.name, "trigger");
        const expression = cronOf(kind, p);
        if (expression) entry("mapped");
        else entry("approximated", "the schedule rule could not be read; set the cron expression");
        return { ...base, type: "cron", pieceId: "schedule", actionId: "cron", config: { expression: expression ?? "0 * * * *", timezone: "UTC" } };
      }
      case "emailReadImap":
        this.refs.set(node.name, "trigger.body");
        entry(
          "approximated",
          "polls the mailbox of the email connection (choose one: n8n credentials are not carried); message fields are named as the email piece names them",
        );
        return { ...base, type: "poll", pieceId: "email", actionId: "new_email", config: {} };
      case "mqttTrigger":
        this.refs.set(node.name, "trigger.body");
        entry("approximated", "subscribes with the mqtt connection (choose one: n8n credentials are not carried)");
        return {
          ...base,
          type: "subscription",
          pieceId: "mqtt",
          actionId: "message_received",
          config: {
            topic: String(p.topics ?? "#")
              .split(",")[0]!
              .trim(),
          },
        };
      case "rssFeedReadTrigger":
        this.refs.set(node.name, "trigger.body");
        entry("approximated", "polled at the feed piece's poll interval (poll_interval_seconds), not n8n's poll times");
        return { ...base, type: "poll", pieceId: "feed", actionId: "new_item", config: { feed_url: this.tx(p.feedUrl ?? "") } };
      default:
        this.refs.set(node.name, "trigger.body");
        entry("not_mapped", `no Weft trigger for ${node.type}: a manual trigger stands in; replace it`);
        this.placeholders++;
        return { ...base, type: "manual", config: {}, valid: false };
    }
  }

  // ---- walking the connections --------------------------------------------------------------------

  private targets(name: string, output: number): string[] {
    return (this.source.connections?.[name]?.main?.[output] ?? []).map((c) => c.node);
  }

  /** The steps that follow output `output` of `name`: one target continues the chain; several run one after another. */
  private follow(name: string, output: number, walk: Walk): ActionNodeT[] {
    const targets = this.targets(name, output);
    if (targets.length === 0) return this.pathEnd(walk);
    if (targets.length === 1) return this.walk(targets[0]!, walk);
    const steps: ActionNodeT[] = [];
    for (const target of targets) steps.push(...this.walk(target, walk));
    const note = `output ${output} feeds ${targets.length} nodes at once (${targets.join(", ")}): they run one after another, each path in full`;
    const own = this.entries.findLast((e) => e.node === name);
    if (own) {
      if (own.outcome === "mapped") own.outcome = "approximated";
      own.note = own.note ? `${own.note}; ${note}` : note;
    } else this.entries.push({ node: name, type: this.nodes.get(name)?.type ?? "", outcome: "approximated", note });
    return steps;
  }

  /** Where a path ends: a webhook answering with the last node, or a sub-workflow returning it, gets the step that does so. */
  private pathEnd(walk: Walk): ActionNodeT[] {
    const last = `{{ ${walk.ref} }}`;
    if (this.respondAtEnd) return [this.endStep("respond", "Respond with the last output", "webhook", "respond", { status: 200, body: last })];
    if (this.returnAtEnd) return [this.endStep("return", "Return the last output", "subflows", "return_response", { value: last })];
    return [];
  }

  /** A piece step that ends a path, named `{prefix}_{n}`. */
  private endStep(prefix: string, displayName: string, pieceId: string, actionId: string, config: Record<string, unknown>): ActionNodeT {
    return { name: this.names.of(`${prefix}_${++this.ends}`), displayName, type: "PIECE", pieceId, actionId, config };
  }

  /** Converts `name` and everything after it. */
  private walk(name: string, walk: Walk): ActionNodeT[] {
    if (name === walk.stopAt) return [];
    const node = this.nodes.get(name);
    if (!node) return [];
    if (short(node.type) === "merge" && walk.joins && !this.done.has(name)) {
      // A branch of a router reaches a Merge: the path ends here, and the Merge follows the router.
      walk.joins.set(name, [...(walk.joins.get(name) ?? []), walk.ref]);
      return [];
    }
    if (this.done.has(name)) {
      const note = "reached by a second path: a Weft tree runs it once, on the first path";
      const own = this.entries.findLast((e) => e.node === name);
      if (own) {
        if (own.outcome === "mapped") own.outcome = "approximated";
        own.note = own.note ? `${own.note}; ${note}` : note;
      } else this.entries.push({ node: name, type: node.type, outcome: "approximated", note });
      return [];
    }
    this.done.add(name);
    this.notes = [];
    const kind = short(node.type);
    const step = this.names.of(name);
    const p = node.parameters ?? {};

    switch (kind) {
      case "if":
      case "filter":
      case "switch":
        return [this.router(node, step, walk)];
      case "splitInBatches":
        return this.loop(node, step, walk);
      case "merge":
        return this.merge(node, walk);
      case "noOp":
        this.refs.set(name, walk.ref);
        this.entries.push({ node: name, type: node.type, outcome: "mapped", note: "no step: the next step reads its input" });
        return this.follow(name, 0, walk);
    }

    const converted = this.action(node, step, p, walk.ref);
    let steps: ActionNodeT[];
    if (converted) {
      if (node.disabled) converted.step.skip = true;
      const notes = [...converted.notes, ...this.notes, ...(node.disabled ? ["disabled in n8n: the step is skipped"] : [])];
      // A disabled node passes its input on in n8n: the next step reads what this one was given.
      this.refs.set(name, node.disabled ? walk.ref : converted.ref);
      this.entries.push({
        node: name,
        type: node.type,
        outcome: notes.length ? "approximated" : "mapped",
        step,
        ...(notes.length ? { note: notes.join("; ") } : {}),
      });
      steps = [converted.step];
    } else {
      this.refs.set(name, walk.ref);
      this.placeholders++;
      const why = `no Weft step for ${node.type}`;
      this.entries.push({ node: name, type: node.type, outcome: "not_mapped", step, note: `${why}: a placeholder stands in` });
      steps = [placeholderStep(step, node.type, why, { type: node.type, typeVersion: node.typeVersion, parameters: p })];
    }
    return [...steps, ...this.follow(name, 0, { ...walk, ref: this.refs.get(name)! })];
  }

  // ---- actions -----------------------------------------------------------------------------------

  private action(node: N8nNode, step: string, p: Record<string, any>, ref: Ref): { step: ActionNodeT; ref: Ref; notes: string[] } | null {
    const piece = (pieceId: string, actionId: string, config: Record<string, unknown>): ActionNodeT => ({
      name: step,
      displayName: node.name.slice(0, 200),
      type: "PIECE",
      pieceId,
      actionId,
      config,
    });
    const notes: string[] = [];
    const credentials = () => {
      if (node.credentials) notes.push("choose a connection: n8n credentials are not carried");
    };
    switch (short(node.type)) {
      case "set": {
        const { fields, keepInput } = setFields(node, (v) => this.tx(v, ref));
        if (keepInput) return { step: piece("data", "merge", { objects: [`{{ ${ref} }}`, nest(fields)], mode: "deep" }), ref: `${step}.output`, notes };
        return { step: piece("data", "set_fields", { fields }), ref: `${step}.output`, notes };
      }
      case "code": {
        if ((p.language ?? "javaScript") !== "javaScript") return null;
        const body: string = p.mode === "runOnceForEachItem" ? (p.jsCode ?? "") : (p.jsCode ?? "");
        if (/\$\(|\$node\b/.test(body))
          notes.push("the code reads other nodes ($(...) / $node): only $input and $json are provided; pass what it needs in the step's input");
        return { step: piece("code", "run_code", { input: { item: `{{ ${ref} }}` }, code: codeShim(body) }), ref: `${step}.output`, notes };
      }
      case "httpRequest": {
        const config: Record<string, unknown> = {
          method: p.method ?? p.requestMethod ?? "GET",
          url: this.tx(p.url ?? ""),
          body_type: "none",
          auth_type: "none",
        };
        const pairs = (list: any) =>
          Object.fromEntries(((list?.parameters ?? []) as Array<{ name: string; value: unknown }>).map((x) => [x.name, this.tx(x.value, ref)]));
        if (p.sendQuery) config.query = pairs(p.queryParameters);
        if (p.sendHeaders) config.headers = pairs(p.headerParameters);
        if (p.sendBody) {
          const type = p.contentType ?? "json";
          if (type === "json") {
            config.body_type = "json";
            config.body_json = p.specifyBody === "json" ? jsonBody(this.tx(p.jsonBody ?? "{}", ref)) : nest(pairs(p.bodyParameters));
          } else if (type === "form-urlencoded") {
            config.body_type = "form";
            config.body_form = pairs(p.bodyParameters);
          } else if (type === "raw") {
            config.body_type = "raw";
            config.body_raw = this.tx(p.body ?? "", ref);
            config.content_type = p.rawContentType ?? "text/plain";
          } else notes.push(`body content type ${type} is not carried`);
        }
        if (p.authentication && p.authentication !== "none") {
          notes.push(`authentication ${p.authentication} is not carried: set auth_type and a connection`);
        }
        return { step: piece("http", "send_request", config), ref: `${step}.output.body`, notes };
      }
      case "respondToWebhook": {
        const with_ = p.respondWith ?? "firstIncomingItem";
        const options = p.options ?? {};
        const config: Record<string, unknown> = { status: options.responseCode ?? 200 };
        const headers = options.responseHeaders?.entries as Array<{ name: string; value: unknown }> | undefined;
        if (headers?.length) config.headers = Object.fromEntries(headers.map((h) => [h.name, this.tx(h.value, ref)]));
        if (with_ === "firstIncomingItem") config.body = `{{ ${ref} }}`;
        else if (with_ === "allIncomingItems") {
          config.body = `{{ [${ref}] }}`;
          notes.push("all incoming items: the one item Weft passes, in a list");
        } else if (with_ === "json") config.body = jsonBody(this.tx(p.responseBody ?? "{}", ref));
        else if (with_ === "text") config.body = this.tx(p.responseBody ?? "", ref);
        else if (with_ !== "noData") return null;
        return { step: piece("webhook", "respond", config), ref, notes };
      }
      case "wait": {
        const resume = p.resume ?? "timeInterval";
        if (resume === "timeInterval") {
          const unit = { seconds: 1, minutes: 60, hours: 3600, days: 86_400 }[(p.unit ?? "hours") as string] ?? 1;
          return { step: piece("delay", "delay_for", { seconds: Number(p.amount ?? 1) * unit }), ref, notes };
        }
        if (resume === "specificTime") return { step: piece("delay", "delay_until", { until: this.tx(p.dateTime ?? "", ref) }), ref, notes };
        return null;
      }
      case "executeWorkflow": {
        const id = typeof p.workflowId === "object" ? p.workflowId?.value : p.workflowId;
        notes.push(`calls n8n workflow "${id ?? ""}": set workflow_id to the Weft workflow that replaces it`);
        return {
          step: piece("subflows", "call_workflow", { workflow_id: String(id ?? ""), payload: `{{ ${ref} }}`, wait: p.options?.waitForSubWorkflow !== false }),
          ref: `${step}.output.response`,
          notes,
        };
      }
      case "emailSend": {
        credentials();
        const format = p.emailFormat ?? (node.typeVersion && node.typeVersion >= 2 ? "html" : "text");
        const config: Record<string, unknown> = { to: this.tx(p.toEmail ?? "", ref), subject: this.tx(p.subject ?? "", ref) };
        if (p.fromEmail) config.from = this.tx(p.fromEmail, ref);
        if ((format === "text" || format === "both") && p.text !== undefined) config.text = this.tx(p.text, ref);
        if ((format === "html" || format === "both") && p.html !== undefined) config.html = this.tx(p.html, ref);
        if (node.typeVersion === 1 || node.typeVersion === undefined) {
          if (p.text !== undefined) config.text = this.tx(p.text, ref);
          if (p.html !== undefined) config.html = this.tx(p.html, ref);
        }
        return { step: piece("email", "send_email", config), ref: `${step}.output`, notes };
      }
      case "mqtt": {
        credentials();
        const sendInput = p.sendInputData !== false;
        const config = sendInput
          ? { topic: this.tx(p.topic ?? "", ref), payload_type: "json", payload: `{{ ${ref} }}` }
          : { topic: this.tx(p.topic ?? "", ref), payload_type: "text", payload: this.tx(p.message ?? "", ref) };
        return { step: piece("mqtt", "publish", config), ref, notes };
      }
      case "rssFeedRead":
        notes.push("n8n passes one item per feed entry; the step's output.items is the list");
        return { step: piece("feed", "read_feed", { feed_url: this.tx(p.url ?? "", ref) }), ref: `${step}.output.items`, notes };
      case "postgres":
      case "mySql": {
        credentials();
        const op = p.operation ?? "executeQuery";
        const table = typeof p.table === "object" ? p.table?.value : p.table;
        if (op === "executeQuery") {
          if (/\{\{/.test(String(p.query ?? ""))) notes.push("the query holds expressions: they are inserted as text, not as parameters");
          return { step: piece("sql", "run_query", { query: this.tx(p.query ?? "", ref) }), ref: `${step}.output.rows`, notes };
        }
        if (op === "insert") {
          notes.push("inserts the incoming item as one row");
          return { step: piece("sql", "insert_rows", { table: String(table ?? ""), rows: `{{ [${ref}] }}` }), ref: `${step}.output`, notes };
        }
        if (op === "select")
          return { step: piece("sql", "select_rows", { table: String(table ?? ""), limit: p.limit ?? 100 }), ref: `${step}.output.rows`, notes };
        return null;
      }
    }
    return null;
  }

  // ---- IF, Filter, Switch ------------------------------------------------------------------------

  private router(node: N8nNode, step: string, walk: Walk): ActionNodeT {
    const kind = short(node.type);
    const p = node.parameters ?? {};
    this.refs.set(node.name, walk.ref);
    const notes: string[] = [];
    const cond = (spec: any) => {
      const result = conditionsOf(spec, p, (v) => this.tx(v, walk.ref));
      notes.push(...result.notes);
      return result.groups;
    };
    const branches: NonNullable<ActionNodeT["branches"]> = [];
    const joins = new Map<string, Ref[]>();
    walk = { ...walk, joins };
    if (kind === "if") {
      branches.push({ name: "true", conditions: cond(p.conditions), firstAction: chain(this.follow(node.name, 0, walk)) });
      branches.push({ name: "false", conditions: [], firstAction: chain(this.follow(node.name, 1, walk)) });
    } else if (kind === "filter") {
      branches.push({ name: "kept", conditions: cond(p.conditions), firstAction: chain(this.follow(node.name, 0, walk)) });
      branches.push({ name: "dropped", conditions: [], firstAction: chain(this.pathEnd(walk)) });
    } else {
      const rules = switchRules(node);
      if (rules === null) {
        this.placeholders++;
        this.entries.push({
          node: node.name,
          type: node.type,
          outcome: "not_mapped",
          step,
          note: `Switch mode ${p.mode}: only rules map; a placeholder stands in`,
        });
        return placeholderStep(step, node.type, `Switch mode ${p.mode}`, p);
      }
      rules.list.forEach((rule, i) => {
        branches.push({
          name: rule.name ?? `output_${i}`,
          conditions: cond(rule.conditions),
          firstAction: chain(this.follow(node.name, rule.output ?? i, walk)),
        });
      });
      const fallback = rules.fallback;
      branches.push({ name: "fallback", conditions: [], firstAction: chain(fallback === null ? this.pathEnd(walk) : this.follow(node.name, fallback, walk)) });
      if (p.options?.allMatchingOutputs) notes.push("all matching outputs: Weft takes the first branch that matches");
    }
    for (const b of branches) if (!b.firstAction) delete b.firstAction;
    const unmappable = notes.some((n) => n.startsWith("operator"));
    if (unmappable) this.placeholders++;
    this.entries.push({
      node: node.name,
      type: node.type,
      outcome: notes.length ? "approximated" : "mapped",
      step,
      ...(notes.length ? { note: notes.join("; ") } : {}),
    });
    const router: ActionNodeT = {
      name: step,
      displayName: node.name.slice(0, 200),
      type: "ROUTER",
      config: {},
      branches,
      ...(unmappable ? { valid: false } : {}),
    };
    const after = this.joined(node.name, joins, { ref: walk.ref, stopAt: walk.stopAt });
    if (after.length) router.nextAction = chain(after);
    return router;
  }

  /**
   * The one tree case of Merge: the branches of a router meet again. Only the branch that ran brings an item, so
   * the Merge follows the router and reads the output of whichever branch ran.
   */
  private joined(routerName: string, joins: Map<string, Ref[]>, walk: Walk): ActionNodeT[] {
    const [first, ...others] = [...joins.entries()];
    if (!first) return [];
    for (const [name] of others) {
      const node = this.nodes.get(name)!;
      this.entries.push({
        node: name,
        type: node.type,
        outcome: "not_mapped",
        note: `a second Merge after the branches of ${routerName}: its paths end before it`,
      });
    }
    const [name, refs] = first;
    const node = this.nodes.get(name)!;
    this.done.add(name);
    const ref = refs.length === 1 ? refs[0]! : refs.reduceRight((rest, r) => `($exists(${r}) ? ${r} : ${rest})`);
    this.refs.set(name, ref);
    this.entries.push({
      node: name,
      type: node.type,
      outcome: "approximated",
      note: `joins the branches of ${routerName}: no step; what follows runs after the router and reads the output of the branch that ran`,
    });
    return this.follow(name, 0, { ...walk, ref });
  }

  /** A Merge outside a router's branches: with one input it passes the item on; otherwise it is not a tree. */
  private merge(node: N8nNode, walk: Walk): ActionNodeT[] {
    const step = this.names.of(node.name);
    const inputs = Object.values(this.source.connections ?? {}).flatMap((o) => (o.main ?? []).flatMap((l) => (l ?? []).filter((c) => c.node === node.name)));
    if (inputs.length <= 1) {
      this.refs.set(node.name, walk.ref);
      this.entries.push({ node: node.name, type: node.type, outcome: "mapped", note: "one input: no step, the next step reads its input" });
      return this.follow(node.name, 0, walk);
    }
    this.placeholders++;
    this.refs.set(node.name, walk.ref);
    const why = "a Merge of paths that do not come from one router's branches is not a tree";
    this.entries.push({ node: node.name, type: node.type, outcome: "not_mapped", step, note: `${why}: a placeholder stands in` });
    return [placeholderStep(step, node.type, why, node.parameters ?? {}), ...this.follow(node.name, 0, walk)];
  }

  // ---- Loop Over Items ---------------------------------------------------------------------------

  private loop(node: N8nNode, step: string, walk: Walk): ActionNodeT[] {
    const p = node.parameters ?? {};
    const notes = ["one item per iteration"];
    if (p.batchSize && Number(p.batchSize) !== 1) notes[0] = `batches of ${p.batchSize} become one item per iteration`;
    const v3 = (node.typeVersion ?? 1) >= 3;
    const loopOutput = v3 ? 1 : 0;
    this.refs.set(node.name, `${step}.item`);
    const body = chain(
      this.follow(node.name, loopOutput, { ref: `${step}.item`, stopAt: node.name }).filter((s) => s.pieceId !== "webhook" || s.actionId !== "respond"),
    );
    this.entries.push({ node: node.name, type: node.type, outcome: "approximated", step, note: notes.join("; ") });
    const loopStep: ActionNodeT = { name: step, displayName: node.name.slice(0, 200), type: "LOOP_ON_ITEMS", config: { items: `{{ ${walk.ref} }}` } };
    if (body) loopStep.firstLoopAction = body;
    // After the loop ("done") the next node reads the items that went in.
    const after = v3 ? this.follow(node.name, 0, walk) : this.pathEnd(walk);
    return [loopStep, ...after];
  }

  // ---- expressions -------------------------------------------------------------------------------

  /** An n8n parameter value with its `={{ js }}` expressions as Weft's `{{ jsonata }}` (docs/import.md, "Expressions"). */
  private tx(value: unknown, ref: Ref = "trigger"): any {
    if (typeof value !== "string") {
      if (Array.isArray(value)) return value.map((v) => this.tx(v, ref));
      if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.tx(v, ref)]));
      return value;
    }
    if (!value.startsWith("=")) return value;
    return value.slice(1).replace(/\{\{([\s\S]*?)\}\}/g, (_, js: string) => `{{ ${this.expression(js.trim(), ref)} }}`);
  }

  private expression(js: string, ref: Ref): string {
    const out = translate(js, ref, (name) => this.refs.get(name) ?? this.names.of(name));
    // Judged with the references set aside: what is left must be a path, an operator or a literal.
    const rest = translate(js, "REF", () => "REF");
    if (/\$\(|\$node|\$input|=>|\.[A-Za-z_]+\(|\?|`/.test(rest.replaceAll("$now()", "")))
      this.notes.push(`expression {{ ${js} }} is JavaScript Weft cannot translate: kept as {{ ${out} }}; rewrite it in JSONata`);
    return out;
  }
}

// ---- helpers ----------------------------------------------------------------------------------------

/** The JavaScript of an n8n expression with its references to items as Weft paths and its operators as JSONata's. */
function translate(js: string, ref: Ref, nodeRef: (name: string) => Ref): string {
  return js
    .replace(/\$\(\s*(['"])(.+?)\1\s*\)\.(?:item|first\(\)|last\(\))\.json/g, (_, _q, name: string) => nodeRef(name))
    .replace(/\$node\[\s*(['"])(.+?)\1\s*\]\.json/g, (_, _q, name: string) => nodeRef(name))
    .replace(/\$input\.(?:item|first\(\)|last\(\))\.json/g, () => ref)
    .replace(/\$json\b/g, () => ref)
    .replace(/\$now\b/g, () => "$now()")
    .replace(/\[\s*(['"])([A-Za-z_][A-Za-z0-9_]*)\1\s*\]/g, ".$2")
    .replace(/===?/g, "=")
    .replace(/!==?/g, "!=")
    .replace(/&&/g, " and ")
    .replace(/\|\|/g, " or ")
    .replace(/\s+/g, " ")
    .trim();
}

function short(type: string): string {
  return type.startsWith(BASE) ? type.slice(BASE.length) : type;
}

/** n8n's Schedule Trigger rules and the legacy Cron node's trigger times as one cron expression. */
function cronOf(kind: string, p: Record<string, any>): string | null {
  if (kind === "cron") {
    const item = p.triggerTimes?.item?.[0];
    if (!item) return null;
    if (item.mode === "custom") return item.cronExpression ?? null;
    if (item.mode === "everyMinute") return "* * * * *";
    if (item.mode === "everyHour") return `${item.minute ?? 0} * * * *`;
    if (item.mode === "everyDay") return `${item.minute ?? 0} ${item.hour ?? 0} * * *`;
    return null;
  }
  const rule = p.rule?.interval?.[0] ?? {};
  switch (rule.field ?? "days") {
    case "cronExpression":
      return rule.expression ?? null;
    case "seconds":
      return `*/${rule.secondsInterval ?? 30} * * * * *`;
    case "minutes":
      return `*/${rule.minutesInterval ?? 5} * * * *`;
    case "hours":
      return `${rule.triggerAtMinute ?? 0} */${rule.hoursInterval ?? 1} * * *`;
    case "days":
      return `${rule.triggerAtMinute ?? 0} ${rule.triggerAtHour ?? 0} */${rule.daysInterval ?? 1} * *`;
    default:
      return null;
  }
}

/** Set / Edit Fields in each of its versions: the fields it assigns, and whether the input's other fields stay. */
function setFields(node: N8nNode, tx: (v: unknown) => unknown): { fields: Record<string, unknown>; keepInput: boolean } {
  const p = node.parameters ?? {};
  const fields: Record<string, unknown> = {};
  const version = node.typeVersion ?? 1;
  if (version < 3) {
    for (const kind of ["string", "number", "boolean"]) for (const f of p.values?.[kind] ?? []) fields[f.name] = tx(f.value);
    return { fields, keepInput: !p.keepOnlySet };
  }
  if (p.mode === "raw") {
    const json = tx(p.jsonOutput ?? "{}");
    const parsed = typeof json === "string" ? safeJson(json) : json;
    if (parsed && typeof parsed === "object") Object.assign(fields, parsed);
  } else if (p.assignments) {
    for (const a of p.assignments.assignments ?? []) fields[a.name] = tx(a.value);
  } else {
    for (const f of p.fields?.values ?? []) {
      const key = Object.keys(f).find((k) => k.endsWith("Value"));
      fields[f.name] = tx(key ? f[key] : f.value);
    }
  }
  const keep = p.includeOtherFields === true || (version < 3.3 && p.include === "all");
  return { fields, keepInput: keep };
}

/** Dotted names as nested objects (n8n's dot notation, on by default). */
function nest(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, any> = {};
  for (const [name, value] of Object.entries(fields)) {
    const parts = name.split(".");
    let at = out;
    for (const part of parts.slice(0, -1)) {
      if (!at[part] || typeof at[part] !== "object") at[part] = {};
      at = at[part];
    }
    at[parts.at(-1)!] = value;
  }
  return out;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A JSON body: parsed when it is literal JSON, else the (translated) text, which a `{{ }}` may fill. */
function jsonBody(text: unknown): unknown {
  if (typeof text !== "string") return text;
  const parsed = safeJson(text);
  return parsed ?? text;
}

/** n8n's Code node (JavaScript) inside Weft's code piece: `$input`, `$json` and `items` read the one item; `[{json}]` results are unwrapped. */
function codeShim(body: string): string {
  return [
    "export const code = async (inputs) => {",
    "  const $json = inputs.item;",
    "  const $input = { all: () => [{ json: inputs.item }], first: () => ({ json: inputs.item }), last: () => ({ json: inputs.item }), item: { json: inputs.item } };",
    "  const items = $input.all();",
    "  const result = await (async () => {",
    body,
    "  })();",
    "  const list = (Array.isArray(result) ? result : [result]).map((i) => (i && typeof i === 'object' && 'json' in i ? i.json : i));",
    "  return list.length === 1 ? list[0] : list;",
    "};",
  ].join("\n");
}

const V2_OPERATORS: Record<string, Record<string, string>> = {
  string: {
    equals: "text_eq",
    notEquals: "text_neq",
    contains: "text_contains",
    notContains: "text_not_contains",
    startsWith: "text_starts_with",
    endsWith: "text_ends_with",
    regex: "text_regex",
    exists: "exists",
    notExists: "not_exists",
    notEmpty: "exists",
    empty: "not_exists",
  },
  number: {
    equals: "number_eq",
    notEquals: "number_neq",
    gt: "number_gt",
    gte: "number_gte",
    lt: "number_lt",
    lte: "number_lte",
    exists: "exists",
    notExists: "not_exists",
  },
  boolean: { true: "boolean_true", false: "boolean_false", exists: "exists", notExists: "not_exists" },
  dateTime: { after: "date_after", before: "date_before", exists: "exists", notExists: "not_exists" },
  array: { contains: "list_contains", empty: "list_empty", notEmpty: "list_not_empty", exists: "exists", notExists: "not_exists" },
  object: { exists: "exists", notExists: "not_exists" },
};

const V1_OPERATORS: Record<string, Record<string, string>> = {
  string: {
    equal: "text_eq",
    notEqual: "text_neq",
    contains: "text_contains",
    notContains: "text_not_contains",
    startsWith: "text_starts_with",
    endsWith: "text_ends_with",
    regex: "text_regex",
    isNotEmpty: "exists",
    isEmpty: "not_exists",
  },
  number: { equal: "number_eq", notEqual: "number_neq", smaller: "number_lt", smallerEqual: "number_lte", larger: "number_gt", largerEqual: "number_gte" },
  boolean: { equal: "boolean_eq", notEqual: "boolean_neq" },
};

const UNARY = new Set(["exists", "not_exists", "boolean_true", "boolean_false", "list_empty", "list_not_empty"]);

/** IF / Filter / Switch conditions (v2 filter structure, or v1's typed lists) as OR-of-AND groups. */
function conditionsOf(spec: any, p: Record<string, any>, tx: (v: unknown) => unknown): { groups: ConditionT[][]; notes: string[] } {
  const notes: string[] = [];
  const list: ConditionT[] = [];
  let any = false;
  if (Array.isArray(spec?.conditions)) {
    any = spec.combinator === "or";
    if (spec.options?.caseSensitive === false) notes.push("case-insensitive comparison: Weft compares text exactly");
    for (const c of spec.conditions) {
      const type = c.operator?.type ?? "string";
      const op = c.operator?.operation ?? "equals";
      let operator = V2_OPERATORS[type]?.[op];
      if (type === "boolean" && op === "equals") operator = c.rightValue === false || c.rightValue === "false" ? "boolean_false" : "boolean_true";
      if (type === "boolean" && op === "notEquals") operator = c.rightValue === false || c.rightValue === "false" ? "boolean_true" : "boolean_false";
      if (!operator) {
        notes.push(`operator ${type}.${op} has no Weft counterpart; the condition is left out`);
        continue;
      }
      list.push(UNARY.has(operator) ? { field: tx(c.leftValue), operator } : { field: tx(c.leftValue), operator, value: tx(c.rightValue) });
    }
  } else if (spec && typeof spec === "object") {
    any = p.combineOperation === "any";
    for (const [type, items] of Object.entries(spec)) {
      for (const c of (items as any[]) ?? []) {
        let operator = V1_OPERATORS[type]?.[c.operation ?? "equal"];
        if (type === "boolean") {
          const wanted = operator === "boolean_eq" ? c.value2 !== false : c.value2 === false;
          operator = wanted ? "boolean_true" : "boolean_false";
        }
        if (!operator) {
          notes.push(`operator ${type}.${c.operation} has no Weft counterpart; the condition is left out`);
          continue;
        }
        list.push(UNARY.has(operator) ? { field: tx(c.value1), operator } : { field: tx(c.value1), operator, value: tx(c.value2) });
      }
    }
  }
  return { groups: any ? list.map((c) => [c]) : [list], notes };
}

/** A Switch node's rules (v3's filter rules, or v1/v2's typed rules over one value); null for expression mode. */
function switchRules(node: N8nNode): { list: Array<{ name?: string; conditions: any; output?: number }>; fallback: number | null } | null {
  const p = node.parameters ?? {};
  if ((p.mode ?? "rules") !== "rules") return null;
  const version = node.typeVersion ?? 1;
  if (version >= 3) {
    const values = (p.rules?.values ?? []) as Array<{ conditions: any; renameOutput?: boolean; outputKey?: string }>;
    const fb = p.options?.fallbackOutput;
    const fallback = fb === "extra" ? values.length : typeof fb === "number" ? fb : null;
    return {
      list: values.map((v) => ({ name: v.renameOutput && v.outputKey ? safeName(v.outputKey) : undefined, conditions: v.conditions })),
      fallback,
    };
  }
  const type = p.dataType ?? "number";
  const rules = (p.rules?.rules ?? []) as Array<{ operation?: string; value2?: unknown; output?: number }>;
  const fb = p.fallbackOutput;
  return {
    list: rules.map((r, i) => ({
      name: `output_${r.output ?? i}`,
      output: r.output ?? i,
      conditions: { [type]: [{ value1: p.value1, operation: r.operation ?? "equal", value2: r.value2 }] },
    })),
    fallback: typeof fb === "number" && fb >= 0 ? fb : null,
  };
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_ -]+/g, "").slice(0, 100) || "output";
}
