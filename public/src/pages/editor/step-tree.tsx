/**
 * The step tree drawn top-down: trigger, steps, router branches side by side, loop bodies and
 * error branches. Each step is a button (Enter selects); arrow keys move between steps in execution
 * order; "+" buttons insert a step at that place.
 */
import type { ActionNode, StepNode } from "../../types";
import type { EditorStore } from "./editor-store";
import type { Slot } from "./tree";

export interface TreeProps {
  store: EditorStore;
  onAdd(slot: Slot, label: string): void;
}

function kindLabel(node: StepNode): string {
  if (node.type === "ROUTER") return "Router";
  if (node.type === "LOOP_ON_ITEMS") return "Loop on items";
  if (node.pieceId) return `${node.pieceId}${node.actionId ? ` · ${node.actionId}` : ""}`;
  return node.type;
}

function AddButton({ slot, label, onAdd }: { slot: Slot; label: string; onAdd: TreeProps["onAdd"] }) {
  return (
    <div class="connector">
      <button type="button" class="add" aria-label={label} title={label} onClick={() => onAdd(slot, label)}>
        +
      </button>
    </div>
  );
}

function NodeCard({ node, store, trigger }: { node: StepNode & Partial<ActionNode>; store: EditorStore; trigger?: boolean }) {
  const diags = store.diagnosticsByStep.value.get(node.name) ?? [];
  const errors = diags.filter((d) => d.severity === "error").length;
  const result = store.stepResults.value.get(node.name);
  const isSelected = store.selected.value === node.name;
  const title = node.displayName || node.name;
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
      <span class="node-kind">{trigger ? "Trigger" : kindLabel(node)}</span>
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

function Chain({
  first,
  slot,
  store,
  onAdd,
  context,
}: {
  first: ActionNode | undefined;
  slot: Slot;
  store: EditorStore;
  onAdd: TreeProps["onAdd"];
  context: string;
}) {
  const items = [];
  let current = first;
  let currentSlot = slot;
  items.push(
    <AddButton
      key={`add-${currentSlot.owner}-${currentSlot.kind}-${currentSlot.branch ?? ""}`}
      slot={currentSlot}
      label={`Add a step ${context}`}
      onAdd={onAdd}
    />,
  );
  while (current) {
    const node: ActionNode = current;
    items.push(
      <div class="step" key={node.name}>
        <NodeCard node={node} store={store} />
        {node.type === "ROUTER" && (
          <div class="branches" role="group" aria-label={`Branches of ${node.displayName || node.name}`}>
            {(node.branches ?? []).map((branch, index) => (
              <div class="branch" key={index}>
                <div class="branch-label">
                  {branch.name}
                  {branch.conditions.length === 0 ? " (fallback)" : ""}
                </div>
                <Chain
                  first={branch.firstAction}
                  slot={{ owner: node.name, kind: "branch", branch: index }}
                  store={store}
                  onAdd={onAdd}
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
              <Chain
                first={node.firstLoopAction}
                slot={{ owner: node.name, kind: "loop" }}
                store={store}
                onAdd={onAdd}
                context={`in the loop body of ${node.name}`}
              />
            </div>
          </div>
        )}
        {node.onErrorAction && (
          <div class="branches on-error" role="group" aria-label={`On error of ${node.displayName || node.name}`}>
            <div class="branch">
              <div class="branch-label">On error</div>
              <Chain
                first={node.onErrorAction}
                slot={{ owner: node.name, kind: "error" }}
                store={store}
                onAdd={onAdd}
                context={`in the error branch of ${node.name}`}
              />
            </div>
          </div>
        )}
      </div>,
    );
    currentSlot = { owner: node.name, kind: "next" };
    items.push(<AddButton key={`add-after-${node.name}`} slot={currentSlot} label={`Add a step after ${node.displayName || node.name}`} onAdd={onAdd} />);
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
  const def = store.definition.value;
  if (!def) return null;
  return (
    <div class="tree" role="region" aria-label="Workflow steps (arrow keys move between steps)" onKeyDown={onKeyDown}>
      <div class="chain root">
        <div class="step">
          <NodeCard node={def.trigger} store={store} trigger />
        </div>
        <Chain first={def.trigger.nextAction} slot={{ owner: def.trigger.name, kind: "next" }} store={store} onAdd={onAdd} context={`after the trigger`} />
      </div>
    </div>
  );
}
