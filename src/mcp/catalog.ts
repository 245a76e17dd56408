/** The fixed tools, in the order an agent meets them: discover pieces, build, check, ship, run, inspect. */
import { connectionTools } from "./tools/connections";
import { lifecycleTools } from "./tools/lifecycle";
import { pieceTools } from "./tools/pieces";
import { runTools } from "./tools/runs";
import { templateTools } from "./tools/templates";
import { workflowTools } from "./tools/workflows";
import type { McpTool } from "./tool";

export const STATIC_TOOLS: McpTool[] = [...pieceTools, ...templateTools, ...connectionTools, ...workflowTools, ...lifecycleTools, ...runTools];
