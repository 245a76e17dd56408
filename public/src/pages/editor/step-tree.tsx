/**
 * The step tree drawn top-down: trigger, steps, router branches side by side, loop bodies and
 * error branches. Each step is a button (Enter selects); arrow keys move between steps in execution
 * order; "+" buttons insert a step at that place and "Paste" pastes copied steps there. A step's "⋯" menu
 * copies, duplicates or pastes after it; a branch's menu copies its steps or duplicates it.
 */
import { type Signal, useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { PieceIcon, usePieceIcons } from "../../components/piece-icon";
import type { ActionNode, StepNode } from "../../types";
import { copyBranch, copyStep, duplicateBranch, duplicateStep, pasteAt } from "./editor-commands";
import type { EditorStore } from "./editor-store";
import type { Slot } from "./tree";

export interface TreeProps {
  store: EditorStore;
  onAdd(slot: Slot, label: string): void;
}

/** What every part of the tree is drawn with: the store, the add callback, and which menu is open. */
interface TreeContext extends TreeProps {
  openMenu: Signal<string | null>;
}

function kindLabel(node: StepNode): string {
  if (node.type === "ROUTER") return "Router";
  if (node.type === "LOOP_ON_ITEMS") return "Loop on items";
  if (node.pieceId) return `${node.pieceId}${node.actionId ? ` · ${node.actionId}` : ""}`;
  return node.type;
}

/** The id a step's icon is drawn for: its piece, or the flow step it is. */
function iconId(node: StepNode): string {
  if (node.pieceId) return node.pieceId;
  if (node.type === "ROUTER") return "router";
  if (node.type === "LOOP_ON_ITEMS") return "loop";
  return String(node.type).toLowerCase();
}

/** An insertion point: "+" adds a step, "Paste" pastes the clipboard's steps (`where` says where, e.g. "after Greet"). */
function AddButton({ slot, where, ctx }: { slot: Slot; where: string; ctx: TreeContext }) {
  const label = `Add a step ${where}`;
  return (
    <div class="connector">
      <button type="button" class="add" aria-label={label} title={label} onClick={() => ctx.onAdd(slot, label)}>
        +
      </button>
      <button type="button" class="add paste" aria-label={`Paste ${where}`} title={`Paste copied steps ${where}`} onClick={() => void pasteAt(ctx.store, slot)}>
        Paste
      </button>
    </div>
  );
}

/** A "⋯" button with a small menu; arrow keys move between its items, Escape or a click elsewhere closes it. */
function ActionMenu({ id, label, items, ctx }: { id: string; label: string; items: Array<[string, () => void]>; ctx: TreeContext }) {
  const open = ctx.openMenu.value === id;
  const ref = useRef<HTMLDivElement>(null);
  const close = (refocus: boolean) => {
    ctx.openMenu.value = null;
    if (refocus) ref.current?.querySelector<HTMLElement>(".menu-toggle")?.focus();
  };
  useEffect(() => {
    if (!open) return;
    ref.current?.querySelector<HTMLElement>("[role=menuitem]")?.focus();
    const outside = (event: PointerEvent) => {
      if (!ref.current?.contains(event.target as Node)) close(false);
    };
    document.addEventListener("pointerdown", outside);
    return () => document.removeEventListener("pointerdown", outside);
  }, [open]);
  const onKeyDown = (event: KeyboardEvent) => {
    const entries = [...(ref.current?.querySelectorAll<HTMLElement>("[role=menuitem]") ?? [])];
    const at = entries.indexOf(event.target as HTMLElement);
    if (event.key === "Escape") close(true);
    else if (event.key === "ArrowDown") entries[(at + 1) % entries.length]?.focus();
    else if (event.key === "ArrowUp") entries[(at - 1 + entries.length) % entries.length]?.focus();
    else return;
    event.preventDefault();
    event.stopPropagation();
  };
  return (
    <div class="action-menu" ref={ref}>
      <button
        type="button"
        class="menu-toggle"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-label={label}
        title={label}
        onClick={() => {
          ctx.openMenu.value = open ? null : id;
        }}
      >
        ⋯
      </button>
      {open && (
        <div class="menu" role="menu" aria-label={label} onKeyDown={onKeyDown}>
          {items.map(([text, run]) => (
            <button
              type="button"
              role="menuitem"
              key={text}
              onClick={() => {
                close(true);
                run();
              }}
            >
              {text}
            </button>
          ))}
        </div>
      )}
    </div>
  );
}

function NodeCard({ node, store, trigger }: { node: StepNode & Partial<ActionNode>; store: EditorStore; trigger?: boolean }) {
  const diags = store.diagnosticsByStep.value.get(node.name) ?? [];
  const errors = diags.filter((d) => d.severity === "error").length;
  const result = store.stepResults.value.get(node.name);
  const isSelected = store.selected.value === node.name;
  const title = node.displayName || node.name;
  const icons = usePieceIcons();
  const id = iconId(node);
  const parts = [trigger ? "Trigger" : "Step", title, kindLabel(node)];
  if (errors) parts.push(`${errors} problem${errors > 1 ? "s" : ""}`);
  if (result) parts.push(`last test: ${result.status}`);
  if (node.skip) parts.push("skipped");
  return (
    <button
      type="button"
      class={`node${isSelected ? " selected" : ""}${errors ? " has-errors" : ""}${node.skip ? " skipped" : ""}${trigger ? " trigger" : ""}`}
      data-step={node.name}
      aria-pressed={isSelected}
      aria-label={parts.join(", ")}
      onClick={() => {
        store.selected.value = node.name;
      }}
    >
      <span class="node-kind">
        <PieceIcon pieceId={id} icon={icons.get(id)?.icon} name={icons.get(id)?.name ?? id} size={18} />
        {trigger ? "Trigger" : kindLabel(node)}
      </span>
      <span class="node-title">{title}</span>
      <span class="node-name">{node.name}</span>
      <span class="node-badges">
        {errors > 0 && (
          <span class="badge badge-error" title={diags.map((d) => d.message).join("\n")}>
            {errors} ⚠
          </span>
        )}
        {result && <span class={`badge status-${result.status}`}>{result.status}</span>}
      </span>
    </button>
  );
}

/** A step's card with its menu: copy, duplicate, paste after. */
function StepCard({ node, ctx }: { node: ActionNode; ctx: TreeContext }) {
  const { store } = ctx;
  const title = node.displayName || node.name;
  return (
    <div class="node-wrap">
      <NodeCard node={node} store={store} />
      <ActionMenu
        id={`step:${node.name}`}
        label={`Actions of step ${title}`}
        ctx={ctx}
        items={[
          ["Copy", () => void copyStep(store, node.name)],
          ["Duplicate", () => duplicateStep(store, node.name)],
          ["Paste after", () => void pasteAt(store, { owner: node.name, kind: "next" })],
        ]}
      />
    </div>
  );
}

function Chain({ first, slot, ctx, context }: { first: ActionNode | undefined; slot: Slot; ctx: TreeContext; context: string }) {
  const { store } = ctx;
  const items = [];
  let current = first;
  let currentSlot = slot;
  items.push(<AddButton key={`add-${currentSlot.owner}-${currentSlot.kind}-${currentSlot.branch ?? ""}`} slot={currentSlot} where={context} ctx={ctx} />);
  while (current) {
    const node: ActionNode = current;
    items.push(
      <div class="step" key={node.name}>
        <StepCard node={node} ctx={ctx} />
        {node.type === "ROUTER" && (
          <div class="branches" role="group" aria-label={`Branches of ${node.displayName || node.name}`}>
            {(node.branches ?? []).map((branch, index) => (
              <div class="branch" key={index}>
                <div class="branch-label">
                  {branch.name}
                  {branch.conditions.length === 0 ? " (fallback)" : ""}
                  <ActionMenu
                    id={`branch:${node.name}:${index}`}
                    label={`Actions of branch ${branch.name}`}
                    ctx={ctx}
                    items={[
                      ["Copy the branch's steps", () => void copyBranch(store, node.name, index)],
                      // A router has one fallback branch; a copy of it would never run.
                      ...(branch.conditions.length > 0
                        ? ([["Duplicate branch", () => duplicateBranch(store, node.name, index)]] as Array<[string, () => void]>)
                        : []),
                    ]}
                  />
                </div>
                <Chain
                  first={branch.firstAction}
                  slot={{ owner: node.name, kind: "branch", branch: index }}
                  ctx={ctx}
                  context={`in branch ${branch.name} of ${node.name}`}
                />
              </div>
            ))}
          </div>
        )}
        {node.type === "LOOP_ON_ITEMS" && (
          <div class="branches loop" role="group" aria-label={`Loop body of ${node.displayName || node.name}`}>
            <div class="branch">
              <div class="branch-label">For each item</div>
              <Chain first={node.firstLoopAction} slot={{ owner: node.name, kind: "loop" }} ctx={ctx} context={`in the loop body of ${node.name}`} />
            </div>
          </div>
        )}
        {node.onErrorAction && (
          <div class="branches on-error" role="group" aria-label={`On error of ${node.displayName || node.name}`}>
            <div class="branch">
              <div class="branch-label">On error</div>
              <Chain first={node.onErrorAction} slot={{ owner: node.name, kind: "error" }} ctx={ctx} context={`in the error branch of ${node.name}`} />
            </div>
          </div>
        )}
      </div>,
    );
    currentSlot = { owner: node.name, kind: "next" };
    items.push(<AddButton key={`add-after-${node.name}`} slot={currentSlot} where={`after ${node.displayName || node.name}`} ctx={ctx} />);
    current = node.nextAction;
  }
  return <div class="chain">{items}</div>;
}

/** Arrow keys move focus between step buttons in document (= execution) order. */
function onKeyDown(event: KeyboardEvent) {
  const target = event.target as HTMLElement;
  if (!target.classList?.contains("node")) return;
  const nodes = [...(event.currentTarget as HTMLElement).querySelectorAll<HTMLElement>("button.node")];
  const at = nodes.indexOf(target);
  let next: HTMLElement | undefined;
  if (event.key === "ArrowDown" || event.key === "ArrowRight") next = nodes[at + 1];
  else if (event.key === "ArrowUp" || event.key === "ArrowLeft") next = nodes[at - 1];
  else if (event.key === "Home") next = nodes[0];
  else if (event.key === "End") next = nodes[nodes.length - 1];
  if (next) {
    event.preventDefault();
    next.focus();
  }
}

export function StepTree({ store, onAdd }: TreeProps) {
  const openMenu = useSignal<string | null>(null);
  const def = store.definition.value;
  if (!def) return null;
  const ctx: TreeContext = { store, onAdd, openMenu };
  return (
    <div class="tree" role="region" aria-label="Workflow steps (arrow keys move between steps)" onKeyDown={onKeyDown}>
      <div class="chain root">
        <div class="step">
          <NodeCard node={def.trigger} store={store} trigger />
        </div>
        <Chain first={def.trigger.nextAction} slot={{ owner: def.trigger.name, kind: "next" }} ctx={ctx} context={`after the trigger`} />
      </div>
    </div>
  );
}
