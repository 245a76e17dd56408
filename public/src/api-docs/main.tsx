/** Entry of the API reference page (/api/docs): mounts it into the shell's #app element. */
import { render } from "preact";
import { ApiDocs } from "./app";
// The builder's stylesheet first: one look for both pages; ./styles.css adds the reference's own parts.
import "../styles.css";
import "./styles.css";

const root = document.getElementById("app");
// The shell (public/api-docs.html) always has #app; without it there is nowhere to mount.
if (!root) throw new Error("the page has no #app element to mount the API reference into");
root.textContent = "";
render(<ApiDocs />, root);
